/**
 * The one list of topics Hortus knows by name, with the unit their values are in (COMPAT "Boxes": what
 * firmware 1.0.4 sends). Any other topic is stored as sent, without a unit. A new measure (a derived one,
 * another sensor) joins here, so that its name and unit are decided once for every transport.
 */
export interface KnownTopic {
  readonly topic: string;
  /** The unit of its values, as shown to people (SI symbols; `%` relative humidity or soil moisture). */
  readonly unit: string;
  readonly measures: string;
  /** Short name shown to people where a label is expected (Home Assistant's entity name). */
  readonly name: string;
}

export const knownTopics: readonly KnownTopic[] = [
  { topic: 'esp/air/temperature', unit: '°C', measures: 'air temperature', name: 'Air temperature' },
  { topic: 'esp/air/humidity', unit: '%', measures: 'relative air humidity', name: 'Air humidity' },
  { topic: 'esp/air/pressure', unit: 'hPa', measures: 'air pressure', name: 'Air pressure' },
  {
    topic: 'esp/air/gasResistance',
    unit: 'kΩ',
    measures: 'gas resistance (air quality)',
    name: 'Gas resistance',
  },
  { topic: 'esp/ground/moisture/1', unit: '%', measures: 'soil moisture, sensor 1', name: 'Soil moisture 1' },
  { topic: 'esp/ground/moisture/2', unit: '%', measures: 'soil moisture, sensor 2', name: 'Soil moisture 2' },
  { topic: 'esp/ground/moisture/3', unit: '%', measures: 'soil moisture, sensor 3', name: 'Soil moisture 3' },
  { topic: 'esp/ground/light/lux', unit: 'lx', measures: 'illuminance', name: 'Illuminance' },
  {
    topic: 'esp/ground/light/colorTemp',
    unit: 'K',
    measures: 'colour temperature of the light',
    name: 'Colour temperature',
  },
  { topic: 'esp/ground/light/red', unit: '', measures: 'red light (raw sensor count)', name: 'Red light' },
  {
    topic: 'esp/ground/light/green',
    unit: '',
    measures: 'green light (raw sensor count)',
    name: 'Green light',
  },
  { topic: 'esp/ground/light/blue', unit: '', measures: 'blue light (raw sensor count)', name: 'Blue light' },
  {
    topic: 'esp/ground/light/clear',
    unit: '',
    measures: 'unfiltered light (raw sensor count)',
    name: 'Unfiltered light',
  },
  { topic: 'esp/derived/vpd', unit: 'kPa', measures: 'leaf vapour pressure deficit (derived)', name: 'VPD' },
  { topic: 'esp/derived/dew_point', unit: '°C', measures: 'dew point (derived)', name: 'Dew point' },
  {
    topic: 'esp/derived/ppfd',
    unit: 'µmol m⁻² s⁻¹',
    measures: 'photosynthetic photon flux density (derived)',
    name: 'PPFD',
  },
  {
    topic: 'esp/derived/dli',
    unit: 'mol m⁻² d⁻¹',
    measures: 'daily light integral so far (derived)',
    name: 'DLI',
  },
];

/**
 * Topics Hortus derives itself (docs/metrics.md). No ingest path takes a reading under the prefix, so no
 * box or client can forge one; migration and store copy carry them as they are.
 */
export const DERIVED_TOPIC_PREFIX = 'esp/derived/';

export const derivedTopics = {
  vpd: 'esp/derived/vpd',
  dewPoint: 'esp/derived/dew_point',
  ppfd: 'esp/derived/ppfd',
  dli: 'esp/derived/dli',
} as const;

export type DerivedSeries = keyof typeof derivedTopics;

export function isDerivedTopic(topic: string): boolean {
  return topic.startsWith(DERIVED_TOPIC_PREFIX);
}

/** A known topic's name for people ("Air temperature"); any other topic is its own name. */
export function nameOfTopic(topic: string): string {
  return knownTopics.find((known) => known.topic === topic)?.name ?? topic;
}

/** The unit of a known topic; undefined for any other. */
export function unitOfTopic(topic: string): string | undefined {
  return knownTopics.find((known) => known.topic === topic)?.unit;
}

/**
 * A value as people read it, with its topic's unit from knownTopics ("91 %", "23.5 °C"); a topic with no
 * unit (a raw count, a topic Hortus does not know) shows the number alone.
 */
export function withUnit(value: number, topic: string | undefined): string {
  const unit = topic === undefined ? undefined : unitOfTopic(topic);
  // A derived value is computed to full float precision (2.5512861…); people read two decimals. A reading is
  // shown as its box sent it.
  const shown =
    topic !== undefined && isDerivedTopic(topic) ? String(Number(value.toFixed(2))) : String(value);
  return unit === undefined || unit === '' ? shown : `${shown} ${unit}`;
}
