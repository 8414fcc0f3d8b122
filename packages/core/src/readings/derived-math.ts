import { Temporal } from 'temporal-polyfill';

/**
 * The formulas of the derived series (docs/metrics.md): leaf VPD, dew point, PPFD from lux and the daily
 * light integral. Pure functions over numbers and stamps; which readings feed them is DeriveMetrics' part.
 */

/** Saturation vapour pressure in kPa at `celsius` (FAO-56, eq. 11). */
export function saturationVapourPressure(celsius: number): number {
  return 0.6108 * Math.exp((17.27 * celsius) / (celsius + 237.3));
}

/**
 * Leaf vapour pressure deficit in kPa: e_s(T_air + leafOffset) − e_a, with e_a = e_s(T_air) · RH / 100.
 * With a leaf offset of 0 it is the air's VPD. Humidity is taken within 0..100 % (a sensor past 100 % means
 * saturated air, not negative deficit beyond it).
 */
export function leafVpd(airCelsius: number, relativeHumidity: number, leafOffset = 0): number {
  const rh = Math.min(100, Math.max(0, relativeHumidity));
  const actual = (saturationVapourPressure(airCelsius) * rh) / 100;
  return saturationVapourPressure(airCelsius + leafOffset) - actual;
}

/** Magnus coefficients (a, b in °C) for the dew point over water. */
export const MAGNUS_A = 17.62;
export const MAGNUS_B = 243.12;

/** Dew point in °C by the Magnus formula; undefined at 0 % humidity (no dew point). */
export function dewPoint(airCelsius: number, relativeHumidity: number): number | undefined {
  const rh = Math.min(100, relativeHumidity);
  if (!(rh > 0)) return undefined;
  const gamma = Math.log(rh / 100) + (MAGNUS_A * airCelsius) / (MAGNUS_B + airCelsius);
  return (MAGNUS_B * gamma) / (MAGNUS_A - gamma);
}

/** µmol m⁻² s⁻¹ per lux for common light sources (docs/metrics.md, "Choosing the light factor"). */
export const lightPresets = {
  sunlight: 0.0185,
  'white-led': 0.015,
  hps: 0.0122,
} as const;

export type LightPreset = keyof typeof lightPresets;

/** Photosynthetic photon flux density in µmol m⁻² s⁻¹ from illuminance in lux. */
export function ppfdFromLux(lux: number, factor: number): number {
  return Math.max(0, lux) * factor;
}

/** A temperature and a humidity reading further apart than this do not make one value. */
export const PAIR_WITHIN_MS = 2 * 60_000;

export interface Sample {
  readonly time: number;
  readonly value: number;
}

export interface AirPair {
  /** The later of the two readings' stamps. */
  readonly time: number;
  readonly celsius: number;
  readonly humidity: number;
}

/**
 * Pairs temperature and humidity readings in time order: a reading pairs with the unpaired reading of the
 * other kind before it (at the same stamp too) when they are at most PAIR_WITHIN_MS apart, and the pair
 * carries the later stamp; each reading is used once, and a newer reading of one kind replaces an unpaired
 * older one. At equal stamps temperature comes first. The answer depends only on the readings, not on
 * the order they arrived in.
 */
export function pairAirReadings(temperatures: readonly Sample[], humidities: readonly Sample[]): AirPair[] {
  const events = [
    ...temperatures.map((sample) => ({ ...sample, kind: 0 })),
    ...humidities.map((sample) => ({ ...sample, kind: 1 })),
  ].sort((a, b) => a.time - b.time || a.kind - b.kind || a.value - b.value);
  const pairs: AirPair[] = [];
  const pending: ({ time: number; value: number } | undefined)[] = [undefined, undefined];
  for (const event of events) {
    const other = pending[1 - event.kind];
    if (other !== undefined && event.time - other.time <= PAIR_WITHIN_MS) {
      pairs.push({
        time: event.time,
        celsius: event.kind === 0 ? event.value : other.value,
        humidity: event.kind === 1 ? event.value : other.value,
      });
      pending[0] = pending[1] = undefined;
    } else {
      pending[event.kind] = event;
    }
  }
  return pairs;
}

/** Two light readings further apart than this leave a gap the integral does not fill. */
export const LIGHT_GAP_MS = 10 * 60_000;

/**
 * The running integral of a PPFD series in mol m⁻²: `at(t)` is the light received from the first sample
 * to `t`, by the trapezoid rule between neighbouring samples; a stretch between samples more than
 * LIGHT_GAP_MS apart adds nothing. The integral over [a, b] is `at(b) − at(a)`.
 */
export class LightIntegral {
  private readonly times: number[];
  private readonly values: number[];
  /** Cumulative mol m⁻² at each sample. */
  private readonly sums: number[];

  constructor(samples: readonly Sample[]) {
    const sorted = [...samples].sort((a, b) => a.time - b.time);
    this.times = sorted.map((sample) => sample.time);
    this.values = sorted.map((sample) => sample.value);
    this.sums = [0];
    for (let i = 1; i < sorted.length; i += 1)
      this.sums.push((this.sums[i - 1] ?? 0) + this.segment(i - 1, this.times[i] ?? 0));
  }

  /** mol m⁻² from the first sample to `time` (0 before it, the total after the last). */
  at(time: number): number {
    const times = this.times;
    if (times.length === 0 || time <= (times[0] ?? 0)) return 0;
    let low = 0;
    let high = times.length - 1;
    if (time >= (times[high] ?? 0)) return this.sums[high] ?? 0;
    // The last sample at or before `time`.
    while (high - low > 1) {
      const middle = (low + high) >> 1;
      if ((times[middle] ?? 0) <= time) low = middle;
      else high = middle;
    }
    return (this.sums[low] ?? 0) + this.segment(low, time);
  }

  /** mol m⁻² between `from` and `to`. */
  between(from: number, to: number): number {
    return to <= from ? 0 : this.at(to) - this.at(from);
  }

  /** The light from sample `i` to `time` (at most the next sample's stamp), linear in between. */
  private segment(i: number, time: number): number {
    const start = this.times[i] ?? 0;
    const end = this.times[i + 1] ?? start;
    if (end - start > LIGHT_GAP_MS || end <= start) return 0;
    const first = this.values[i] ?? 0;
    const slope = ((this.values[i + 1] ?? 0) - first) / (end - start);
    const span = time - start;
    const valueAt = first + slope * span;
    // µmol m⁻² s⁻¹ over milliseconds: / 1000 for seconds, / 1e6 for mol.
    return (((first + valueAt) / 2) * span) / 1e9;
  }
}

/** When a group's light day begins: local midnight, a local time of day (lights on), or 24 h before. */
export type DayStart =
  | { readonly kind: 'midnight' }
  | { readonly kind: 'local'; readonly hour: number; readonly minute: number }
  | { readonly kind: 'rolling' };

/**
 * The start of the light day that `time` falls in: the latest instant at or before it at which the zone's
 * wall clock showed the day-start time (a start skipped by the clocks going forward is moved on by the gap,
 * one repeated by their going back counts once, the earlier), or `time` − 24 h for the rolling day.
 */
export function dayStartBefore(time: number, dayStart: DayStart, timeZone: string): number {
  if (dayStart.kind === 'rolling') return time - 86_400_000;
  const hour = dayStart.kind === 'local' ? dayStart.hour : 0;
  const minute = dayStart.kind === 'local' ? dayStart.minute : 0;
  const today = Temporal.Instant.fromEpochMilliseconds(time).toZonedDateTimeISO(timeZone).toPlainDate();
  const startOn = (date: Temporal.PlainDate): number =>
    date.toPlainDateTime({ hour, minute }).toZonedDateTime(timeZone, { disambiguation: 'compatible' })
      .epochMilliseconds;
  const start = startOn(today);
  return start <= time ? start : startOn(today.subtract({ days: 1 }));
}

/** The daily light integral in mol m⁻² d⁻¹ at `time`: the light from the day's start to `time`. */
export function dailyLightIntegral(
  light: LightIntegral,
  time: number,
  dayStart: DayStart,
  timeZone: string,
): number {
  return light.between(dayStartBefore(time, dayStart, timeZone), time);
}
