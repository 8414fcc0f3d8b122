import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { join } from 'node:path';
import { type TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '@hortus/core';
import { expect } from 'chai';
import { fingerprintOf, SELF_SIGNED_CERT, SELF_SIGNED_DIR, SELF_SIGNED_KEY } from '../src/app/tls.js';
import { loadConfig } from '../src/app/config.js';
import { Capture, hortus, scratchDataDir } from './harness.js';

interface LogLine {
  readonly event: string;
  readonly [field: string]: unknown;
}

const logLines = (capture: Capture): LogLine[] =>
  capture.text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LogLine);

async function logged(capture: Capture, event: string, after = 0): Promise<LogLine> {
  for (let attempt = 0; attempt < 400; attempt += 1) {
    const line = logLines(capture)
      .slice(after)
      .find((l) => l.event === event);
    if (line !== undefined) return line;
    await sleep(25);
  }
  throw new Error(`no "${event}" in the log; so far: ${capture.text}`);
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly fingerprint: string;
}

/** A request as the boxes make it: a new connection, and the certificate never checked. */
function insecure(url: string, options: RequestOptions = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { rejectUnauthorized: false, agent: false, ...options }, (response) => {
      const socket = response.socket as TLSSocket;
      const raw = socket.getPeerCertificate().fingerprint256;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          fingerprint: raw,
        }),
      );
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/** A key pair and a self-signed certificate made by openssl, as an operator would bring them. */
function opensslCertificate(directory: string, name: string): { certFile: string; keyFile: string } {
  mkdirSync(directory, { recursive: true });
  const certFile = join(directory, `${name}.crt`);
  const keyFile = join(directory, `${name}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    ],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile };
}

function serve(env: Record<string, string>): {
  signals: EventEmitter;
  stdout: Capture;
  exited: ReturnType<typeof hortus>;
} {
  const signals = new EventEmitter();
  const stdout = new Capture();
  const exited = hortus(undefined, ['serve', '--memory', '--demo', '--port', '0'], {
    env: { HOST: '127.0.0.1', HTTPS_PORT: '0', ...env },
    signals,
    stdout,
  });
  return { signals, stdout, exited };
}

describe('HTTPS in Hortus itself', () => {
  it('when TLS_CERT_FILE and TLS_KEY_FILE are set, then every route answers over HTTPS to a client that does not verify, and plain HTTP still answers', async () => {
    const { certFile, keyFile } = opensslCertificate(scratchDataDir(), 'operator');
    const { signals, stdout, exited } = serve({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    const listening = await logged(stdout, 'listening');
    const httpsUrl = listening['httpsUrl'] as string;
    expect(httpsUrl).to.match(/^https:\/\/127\.0\.0\.1:\d+$/u);

    // A poll (answered by the poll lane), a Koa route, a write and the liveness text: the same as over HTTP.
    const actions = await insecure(`${httpsUrl}/api/actions/current_state?group=demo`);
    const devices = await insecure(`${httpsUrl}/api/devices?group=demo`);
    const posted = await insecure(
      `${httpsUrl}/api/data/readings`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' } },
      JSON.stringify([{ topic: 'esp/air/temperature', group: 'demo', value: 21.5 }]),
    );
    const unknown = await insecure(`${httpsUrl}/api/nothing-here`);
    const plain = await fetch(`${listening['url'] as string}/api/actions/current_state?group=demo`);

    expect(actions.status).to.equal(200);
    expect((JSON.parse(actions.body) as { message: unknown[] }).message).to.have.length(4);
    expect(devices.status).to.equal(200);
    expect(posted.status).to.equal(202);
    expect(unknown.status).to.equal(404);
    expect(actions.fingerprint).to.equal(fingerprintOf(readFileSync(certFile)));
    expect(plain.status).to.equal(200);
    expect(JSON.parse(actions.body)).to.deep.equal(await plain.json());

    signals.emit('SIGTERM');
    expect((await exited).code).to.equal(0);
  });

  it('when SIGHUP arrives after the files were replaced, then new connections get the new certificate while an open one is not dropped', async () => {
    const directory = scratchDataDir();
    const first = opensslCertificate(directory, 'first');
    const second = opensslCertificate(directory, 'second');
    const certFile = join(directory, 'live.crt');
    const keyFile = join(directory, 'live.key');
    writeFileSync(certFile, readFileSync(first.certFile));
    writeFileSync(keyFile, readFileSync(first.keyFile));
    const { signals, stdout, exited } = serve({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    const httpsUrl = (await logged(stdout, 'listening'))['httpsUrl'] as string;

    // A keep-alive connection opened before the reload.
    const { Agent } = await import('node:https');
    const kept = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    const before = await insecure(`${httpsUrl}/healthz`, { agent: kept });

    writeFileSync(certFile, readFileSync(second.certFile));
    writeFileSync(keyFile, readFileSync(second.keyFile));
    const linesBefore = logLines(stdout).length;
    signals.emit('SIGHUP');
    const reloaded = await logged(stdout, 'certificate reloaded', linesBefore);

    const fresh = await insecure(`${httpsUrl}/healthz`);
    const onKept = await insecure(`${httpsUrl}/healthz`, { agent: kept });
    kept.destroy();

    expect(before.fingerprint).to.equal(fingerprintOf(readFileSync(first.certFile)));
    expect(reloaded['fingerprint']).to.equal(fingerprintOf(readFileSync(second.certFile)));
    expect(fresh.fingerprint).to.equal(fingerprintOf(readFileSync(second.certFile)));
    // The open connection was not dropped: it answers, still with the certificate it began with.
    expect(onKept.status).to.equal(200);
    expect(onKept.fingerprint).to.equal(before.fingerprint);

    // A broken file on the next SIGHUP: logged, and the certificate in use stays.
    writeFileSync(keyFile, 'not a key');
    const linesThen = logLines(stdout).length;
    signals.emit('SIGHUP');
    const failed = await logged(
      stdout,
      'certificate reload failed, the previous one stays in use',
      linesThen,
    );
    const still = await insecure(`${httpsUrl}/healthz`);
    expect(failed['error']).to.be.a('string');
    expect(still.status).to.equal(200);
    expect(still.fingerprint).to.equal(fresh.fingerprint);

    signals.emit('SIGTERM');
    expect((await exited).code).to.equal(0);
    expect(signals.listenerCount('SIGHUP')).to.equal(0);
  });

  it('when TLS=self-signed, then an ECDSA P-256 certificate is created once in the data directory (0600), its fingerprint logged, and reused on the next start', async () => {
    const dataDir = scratchDataDir();
    const firstRun = serve({ TLS: 'self-signed', HORTUS_DATA_DIR: dataDir });
    const created = await logged(firstRun.stdout, 'self-signed certificate created');
    const httpsUrl = (await logged(firstRun.stdout, 'listening'))['httpsUrl'] as string;
    const answer = await insecure(`${httpsUrl}/api`);
    firstRun.signals.emit('SIGTERM');
    expect((await firstRun.exited).code).to.equal(0);

    const certFile = join(dataDir, SELF_SIGNED_DIR, SELF_SIGNED_CERT);
    const keyFile = join(dataDir, SELF_SIGNED_DIR, SELF_SIGNED_KEY);
    const { X509Certificate, createPrivateKey } = await import('node:crypto');
    const certificate = new X509Certificate(readFileSync(certFile));
    expect(certificate.publicKey.asymmetricKeyDetails).to.deep.equal({ namedCurve: 'prime256v1' });
    expect(createPrivateKey(readFileSync(keyFile)).asymmetricKeyType).to.equal('ec');
    expect(statSync(keyFile).mode & 0o777).to.equal(0o600);
    expect(statSync(certFile).mode & 0o777).to.equal(0o600);
    expect(created['fingerprint']).to.equal(certificate.fingerprint256);
    expect(answer.status).to.equal(200);
    expect(answer.fingerprint).to.equal(certificate.fingerprint256);

    const secondRun = serve({ TLS: 'self-signed', HORTUS_DATA_DIR: dataDir });
    const loaded = await logged(secondRun.stdout, 'certificate loaded');
    secondRun.signals.emit('SIGTERM');
    expect((await secondRun.exited).code).to.equal(0);
    expect(loaded['fingerprint']).to.equal(certificate.fingerprint256);
    expect(logLines(secondRun.stdout).map((l) => l.event)).not.to.include('self-signed certificate created');
  });

  it('when the TLS settings contradict each other or name a missing file, then serve exits 2 or 1 naming them and never listens', async () => {
    expect(() => loadConfig({ TLS_CERT_FILE: '/x.crt' })).to.throw(
      'TLS_CERT_FILE and TLS_KEY_FILE must be set together',
    );
    expect(() => loadConfig({ TLS: 'self-signed', TLS_CERT_FILE: '/a', TLS_KEY_FILE: '/b' })).to.throw(
      'exclude each other',
    );
    expect(() => loadConfig({ TLS: 'maybe' })).to.throw('TLS must be off or self-signed');
    expect(() => loadConfig({ HTTPS_PORT: 'x' })).to.throw('HTTPS_PORT must be a whole number');
    expect(loadConfig({}).tls).to.deep.equal({ mode: 'off' });
    expect(loadConfig({ TLS: 'self-signed' }).tls).to.deep.equal({ mode: 'self-signed' });
    expect(loadConfig({ TLS: 'self-signed' }).httpsPort).to.equal(8443);
    // One setting, read once: the listener and onboarding cannot disagree, and a bad value is one problem.
    let refused: unknown;
    try {
      loadConfig({ HTTPS_PORT: '70000' });
    } catch (error) {
      refused = error;
    }
    expect(refused).to.be.instanceOf(ConfigError);
    expect(
      (refused as ConfigError).problems.filter((problem) => problem.includes('HTTPS_PORT')),
    ).to.have.length(1);

    const invalid = await hortus(undefined, ['serve', '--memory'], { env: { TLS: 'maybe' } });
    expect(invalid.code).to.equal(2);
    expect(invalid.stderr).to.contain('TLS must be off or self-signed');

    const missing = await hortus(undefined, ['serve', '--memory', '--port', '0'], {
      env: {
        HOST: '127.0.0.1',
        HTTPS_PORT: '0',
        TLS_CERT_FILE: '/nonexistent.crt',
        TLS_KEY_FILE: '/nonexistent.key',
      },
    });
    expect(missing.code).to.not.equal(0);
    expect(missing.stdout + missing.stderr).to.contain('/nonexistent.crt');
    expect(missing.stdout).not.to.contain('"listening"');
  });
});
