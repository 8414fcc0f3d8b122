import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as plainRequest } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PublishFirmware, WithdrawFirmware } from '@hortus/core';
import { expect, startTestServer, type TestServer, testStore } from './harness.js';

function imageBytes(size: number, seed: number): Uint8Array {
  const data = new Uint8Array(size);
  for (let i = 0; i < size; i += 1) data[i] = (i * 7 + seed * 11) % 256;
  return data;
}

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

interface Manifest {
  readonly type: string;
  readonly version: string;
  readonly url: string;
}

/** A GET as a box's HTTPS client makes it: a new connection, the certificate never checked. */
function insecureGet(
  url: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { rejectUnauthorized: false, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/** The manifest as the box asks for it, with the Host of the address compiled into it (fetch cannot set Host). */
function manifestFor(base: string, host: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    plainRequest(`${base}/api/hardware/update`, { headers: { Host: host } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: text === '' ? undefined : (JSON.parse(text) as unknown),
        }),
      );
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

describe(`firmware updates for HTTP boxes (${testStore} store)`, () => {
  let server: TestServer;
  let tlsDir: string;
  before(async () => {
    tlsDir = mkdtempSync(join(tmpdir(), 'hortus-firmware-tls-'));
    // TLS=self-signed keeps its certificate in the data directory: the SQLite pass has one of its own.
    server = await startTestServer({
      TLS: 'self-signed',
      HTTPS_PORT: '0',
      ...(testStore === 'sqlite' ? {} : { HORTUS_DATA_DIR: tlsDir }),
    });
  });
  after(async () => {
    await server.close();
    rmSync(tlsDir, { recursive: true, force: true });
  });
  // These requests come from an address no box onboarded from: only forced images are offered to them.
  const publish = (data: Uint8Array, version: string, group?: string, force = true) =>
    server.container
      .get(PublishFirmware)
      .execute({ data, version, force, ...(group === undefined ? {} : { group }) });
  const withdraw = (version: string, group?: string) =>
    server.container.get(WithdrawFirmware).execute({ version, ...(group === undefined ? {} : { group }) });

  it('when nothing is published, then the manifest answers 204 without a body, never an address without an image', async () => {
    const reply = await manifestFor(server.url, '192.168.178.121:8080');

    expect(reply.status).to.equal(204);
    expect(reply.body).to.equal(undefined);
  });

  it('when forced images are published, then the manifest offers the newest for every box at plain HTTP, and the download is byte-identical with Content-Length and a SHA-256 ETag', async () => {
    const older = imageBytes(100_000, 1);
    const newer = imageBytes(1_300_000, 2);
    const groupOnly = imageBytes(5000, 3);
    await publish(older, '1.0.5');
    await publish(newer, '1.0.10');
    await publish(groupOnly, '2.0.0', 'north');

    const offered = (await manifestFor(server.url, '10.0.0.2:8080')).body as Manifest;
    const path = new URL(offered.url).pathname;
    const download = await server.call('GET', path);
    const bytes = await (await fetch(`${server.url}${path}`)).arrayBuffer();
    const overHttps = await insecureGet(`${server.running.httpsUrl ?? ''}${path}`);

    expect(offered).to.deep.equal({
      type: 'esp32-fota-http',
      version: '1.0.10',
      url: `http://10.0.0.2:8080/api/hardware/download/${sha256(newer)}`,
    });
    expect(download.status).to.equal(200);
    expect(download.headers.get('content-type')).to.equal('application/octet-stream');
    expect(download.headers.get('content-length')).to.equal(String(newer.byteLength));
    expect(download.headers.get('etag')).to.equal(`"${sha256(newer)}"`);
    expect(Buffer.from(bytes).equals(Buffer.from(newer))).to.equal(true);
    expect(overHttps.status).to.equal(200);
    expect(overHttps.body.equals(Buffer.from(newer))).to.equal(true);

    await withdraw('1.0.10');
    const afterWithdrawal = (await server.get('/api/hardware/update')).json() as Manifest;
    const gone = await server.call('GET', path);
    expect(afterWithdrawal.version).to.equal('1.0.5');
    expect(afterWithdrawal.url).to.match(new RegExp(`/api/hardware/download/${sha256(older)}$`, 'u'));
    // Not forced: a box of unknown version (this address) is offered nothing.
    await publish(imageBytes(3000, 4), '1.0.11', undefined, false);
    expect((await server.get('/api/hardware/update')).json()).to.deep.include({ version: '1.0.5' });
    await withdraw('1.0.11');
    expect(gone.status).to.equal(404);
    expect(gone.json()).to.deep.equal({ message: 'No such firmware image' });
    await withdraw('1.0.5');
    await withdraw('2.0.0', 'north');
  });

  it('when a download names no published image or no digest at all, then it is a 404 with a message, never a 500', async () => {
    for (const path of [
      `/api/hardware/download/${'a'.repeat(64)}`,
      '/api/hardware/download/not-hex',
      '/api/hardware/download',
    ]) {
      const reply = await server.get(path);
      expect(reply.status, path).to.equal(404);
      expect(reply.json(), path).to.have.property('message').that.is.a('string');
    }
  });
});
