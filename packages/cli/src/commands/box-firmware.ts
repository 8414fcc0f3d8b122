import { type BoxRequest } from './box-wire.js';

/**
 * What firmware 1.0.4 sends, request by request (COMPAT "Boxes"): the simulator sends exactly these. Bodies
 * are pasted together as text, as the firmware pastes them, never serialized: a value it was told (the
 * group name) goes in unescaped.
 */

export const FIRMWARE_VERSION = '1.0.4';
export const FIRMWARE_TYPE = 'esp32-fota-http';
export const NOT_FOUND_BODY = '{"message":"Invalid device ID or device not found"}';
export const RELAYS = ['pump_1', 'led_1', 'ventilator_1', 'ventilator_2'] as const;

/**
 * One sensor per topic, in the order a round posts them, with values in the range the box sends: the BME680
 * (°C, %, hPa, kOhm), the two soil probes as raw 12-bit ADC counts, and the TCS34725's 16-bit counts, which
 * are whole numbers (sent with `.00`).
 */
const SENSORS: readonly (readonly [topic: string, base: number, spread: number, whole: boolean])[] = [
  ['esp/air/temperature', 21, 4, false],
  ['esp/air/humidity', 55, 15, false],
  ['esp/air/pressure', 1013, 8, false],
  ['esp/air/gasResistance', 120, 40, false],
  ['esp/ground/moisture/1', 2200, 400, true],
  ['esp/ground/moisture/2', 2350, 400, true],
  ['esp/ground/light/colorTemp', 5200, 800, true],
  ['esp/ground/light/lux', 800, 600, true],
  ['esp/ground/light/red', 300, 100, true],
  ['esp/ground/light/green', 320, 100, true],
  ['esp/ground/light/blue', 280, 100, true],
  ['esp/ground/light/clear', 900, 300, true],
];

/** The topics a box of firmware 1.0.4 posts, in its order. */
export const FIRMWARE_TOPICS: readonly string[] = SENSORS.map(([topic]) => topic);

/**
 * A reading's value as the box writes it: two decimals (`dtostrf(v, 1, 2)`), and `nan` for a failed
 * sensor read. The sine gives values that move from round to round without a random source.
 */
export function valueOf(index: number, at: number, failed: boolean): string {
  if (failed) return 'nan';
  const [, base, spread, whole] = SENSORS[index]!;
  const value = base + spread * Math.sin(at / 60_000 + index);
  return (whole ? Math.max(0, Math.round(value)) : value).toFixed(2);
}

/**
 * The box's wall-clock time: it sets TZ to Berlin's rule and formats local time with a literal `Z`, so its
 * stamps are 1 h (winter) or 2 h (summer) ahead of the instant.
 */
export function berlinStampOf(instant: Date): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(instant)
      .map(({ type, value }) => [type, value]),
  );
  return `${parts['year']}-${parts['month']}-${parts['day']}T${parts['hour']}:${parts['minute']}:${parts['second']}.000Z`;
}

/** Onboarding, at boot: the backend compiled in, plain `/api/hardware`; `lastactive` is ms since boot. */
export function onboardingRequest(backend: string, boxId: string, sinceBootMs: number): BoxRequest {
  return {
    method: 'GET',
    url: `${backend}/api/hardware`,
    headers: [
      ['Content-Type', 'application/json'],
      ['deviceId', boxId],
      ['updateVersion', FIRMWARE_VERSION],
      ['lastactive', String(Math.max(0, Math.floor(sinceBootMs)))],
    ],
  };
}

/** The updater's manifest check: only the HTTP client's own headers, no device id. */
export function updateCheckRequest(backend: string): BoxRequest {
  return { method: 'GET', url: `${backend}/api/hardware/update`, headers: [] };
}

export interface Onboarding {
  readonly group: string;
  readonly host: string;
  readonly url: string;
  readonly apiKey: string;
}

/** The actions of every round: no filter at all, and a header left over from a browser's preflight. */
export function findRequest(box: Onboarding): BoxRequest {
  return {
    method: 'POST',
    url: `https://${box.host}${box.url}/action/find`,
    headers: [
      ['Content-Type', 'application/json'],
      ['Access-Control-Request-Headers', '*'],
      ['api-key', box.apiKey],
    ],
    body: '{"collection":"actions","database":"Website","dataSource":"Cluster0"}',
  };
}

/** One reading, pasted together: the group as onboarding told it, unescaped. */
export function insertOneRequest(box: Onboarding, topic: string, value: string, stamp: string): BoxRequest {
  const document =
    '{"topic":"' +
    topic +
    '","group":"' +
    box.group +
    '","value":"' +
    value +
    '","time":{"$date":"' +
    stamp +
    '"}}';
  return {
    method: 'POST',
    url: `https://${box.host}${box.url}/action/insertOne`,
    headers: [
      ['Content-Type', 'application/ejson'],
      ['Accept', 'application/json'],
      ['api-key', box.apiKey],
    ],
    body: '{"collection":"datas","database":"Website","dataSource":"Cluster0","document":' + document + '}',
  };
}

/**
 * What the onboarding answer leaves the box with: the four strings when the status is 200 and the body is
 * not the refusal; empty strings otherwise (a box that got a 200 it cannot use stops trying all the same).
 */
export function onboardingOf(status: number, text: string): Onboarding | undefined {
  if (status !== 200 || text === NOT_FOUND_BODY) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const field = (name: string): string => {
    const value = (body as Record<string, unknown>)[name];
    return typeof value === 'string' ? value : '';
  };
  return { group: field('group'), host: field('host'), url: field('url'), apiKey: field('apiKey') };
}

/** The relays a find answer switches: each document naming one, on for `"on"`, off for anything else. */
export function switchesOf(text: string): Map<string, 'on' | 'off'> {
  const switches = new Map<string, 'on' | 'off'>();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return switches;
  }
  const documents = (body as { documents?: unknown } | null)?.documents;
  if (!Array.isArray(documents)) return switches;
  for (const document of documents as { object?: unknown; value?: unknown }[]) {
    if (typeof document?.object === 'string' && (RELAYS as readonly string[]).includes(document.object)) {
      switches.set(document.object, document.value === 'on' ? 'on' : 'off');
    }
  }
  return switches;
}

/** Whether the updater would install an offered version: strictly greater than its own, part by part. */
export function isNewer(offered: string, own = FIRMWARE_VERSION): boolean {
  const parts = (version: string): number[] =>
    version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const [a, b] = [parts(offered), parts(own)];
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return false;
}
