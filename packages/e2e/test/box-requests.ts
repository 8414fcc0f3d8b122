import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIRMWARE_TOPICS } from '@hortus/cli';
import { expect, type Reply, startTestServer, type TestServer, testStore } from './harness.js';

/**
 * A test server that also terminates TLS (TLS=self-signed on a free port), as the box endpoint is always
 * reached over HTTPS. The certificate lives in the data directory: the SQLite pass gives each server one
 * of its own; the other stores get a temporary one, removed at close.
 */
export async function startHttpsTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const tlsDir = mkdtempSync(join(tmpdir(), 'hortus-boxes-tls-'));
  const server = await startTestServer({
    TLS: 'self-signed',
    HTTPS_PORT: '0',
    ...(testStore === 'sqlite' ? {} : { HORTUS_DATA_DIR: tlsDir }),
    ...env,
  });
  return {
    ...server,
    close: async () => {
      await server.close();
      rmSync(tlsDir, { recursive: true, force: true });
    },
  };
}

/**
 * Replays what firmware 1.0.4 sends (COMPAT "Boxes"), byte for byte where it matters: the onboarding
 * headers, the insertOne and find bodies with their Content-Types, and stamps in Berlin wall-clock time
 * labelled UTC. The test server's clock stands at 2025-06-15T12:30:00Z (summer: Berlin is UTC+2).
 */
export const REFUSED = '{"message":"Invalid device ID or device not found"}';
export const TOPICS = FIRMWARE_TOPICS;

export function onboard(api: TestServer, deviceId: string, lastactive = '5230'): Promise<Reply> {
  return api.call('GET', '/api/hardware', {
    headers: { deviceId, updateVersion: '1.0.4', lastactive, 'Content-Type': 'application/json' },
  });
}

export interface Onboarded {
  readonly group: string;
  readonly host: string;
  readonly url: string;
  readonly apiKey: string;
}

export async function onboarded(api: TestServer, deviceId: string): Promise<Onboarded> {
  const reply = await onboard(api, deviceId);
  expect(reply.status, reply.text).to.equal(200);
  return reply.json() as Onboarded;
}

/**
 * A request to the box endpoint as the firmware makes it: to `https://<host><url>` as onboarding gave
 * them, on a new TLS connection each, without checking the certificate. A server without an HTTPS listener
 * (the suites below that test something else) is asked over plain HTTP.
 */
export function toBoxEndpoint(
  api: TestServer,
  box: Pick<Onboarded, 'host' | 'url'>,
  action: string,
  headers: Record<string, string>,
  body: string,
): Promise<Reply> {
  if (api.running.httpsUrl === undefined) {
    return api.call('POST', `${box.url}/action/${action}`, { headers, body });
  }
  const url = `https://${box.host}${box.url}/action/${action}`;
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', headers, rejectUnauthorized: false, agent: false };
    const sent = request(url, options, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: new Headers(
            Object.entries(response.headers).flatMap(([name, value]) =>
              value === undefined ? [] : [[name, String(value)] as [string, string]],
            ),
          ),
          text,
          json: () => JSON.parse(text) as unknown,
        }),
      );
      response.on('error', reject);
    }).on('error', reject);
    sent.end(body);
  });
}

/** The firmware's insertOne: the value as text with two decimals, the stamp as a $date. */
export function insertOne(
  api: TestServer,
  box: Onboarded,
  topic: string,
  value: string,
  stamp: string,
  group = box.group,
): Promise<Reply> {
  return toBoxEndpoint(
    api,
    box,
    'insertOne',
    { 'Content-Type': 'application/ejson', Accept: 'application/json', 'api-key': box.apiKey },
    JSON.stringify({
      collection: 'datas',
      database: 'Website',
      dataSource: 'Cluster0',
      document: { topic, group, value, time: { $date: stamp } },
    }),
  );
}

/** What Arduino's HTTPClient sends before a request's own headers (COMPAT "Boxes", the wire). */
export const HTTP_CLIENT_HEADERS: Readonly<Record<string, string>> = {
  'User-Agent': 'ESP32HTTPClient',
  Connection: 'keep-alive',
  'Accept-Encoding': 'identity;q=1,chunked;q=0.1,*;q=0',
};

/**
 * The firmware's insertOne byte for byte: its headers in its order, and the body pasted together as text,
 * so the group it was told goes in unescaped, as the firmware does it.
 */
export function pastedInsertOne(
  api: TestServer,
  box: Onboarded,
  topic: string,
  value: string,
  stamp: string,
  group = box.group,
): Promise<Reply> {
  return toBoxEndpoint(
    api,
    box,
    'insertOne',
    {
      ...HTTP_CLIENT_HEADERS,
      'Content-Type': 'application/ejson',
      Accept: 'application/json',
      'api-key': box.apiKey,
    },
    '{"collection":"datas","database":"Website","dataSource":"Cluster0","document":{"topic":"' +
      topic +
      '","group":"' +
      group +
      '","value":"' +
      value +
      '","time":{"$date":"' +
      stamp +
      '"}}}',
  );
}

/** The firmware's find byte for byte: its headers in its order, no filter at all. */
export function pastedFind(api: TestServer, box: Pick<Onboarded, 'host' | 'url' | 'apiKey'>): Promise<Reply> {
  return toBoxEndpoint(
    api,
    box,
    'find',
    {
      ...HTTP_CLIENT_HEADERS,
      'Content-Type': 'application/json',
      'Access-Control-Request-Headers': '*',
      'api-key': box.apiKey,
    },
    '{"collection":"actions","database":"Website","dataSource":"Cluster0"}',
  );
}

/** The firmware's find: no filter at all. */
export function find(
  api: TestServer,
  box: Pick<Onboarded, 'host' | 'url' | 'apiKey'>,
  extra: Record<string, unknown> = {},
): Promise<Reply> {
  return toBoxEndpoint(
    api,
    box,
    'find',
    { 'Content-Type': 'application/json', 'api-key': box.apiKey },
    JSON.stringify({ collection: 'actions', database: 'Website', dataSource: 'Cluster0', ...extra }),
  );
}

export type Latest = { topic: string; value: number; time: string; group: string };

export async function latestOf(api: TestServer, group: string): Promise<Latest[]> {
  const reply = await api.get(`/api/data/latestdata/All?groupId=${encodeURIComponent(group)}`);
  expect(reply.status).to.equal(200);
  return reply.json() as Latest[];
}
