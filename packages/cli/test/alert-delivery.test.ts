import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { startSmtpTestServer } from '@hortus/test-support';
import { hortus, scratchDataDir } from './harness.js';

/*
 * At-least-once delivery across a crash: the server raises an alert and queues its messages, is killed
 * (SIGKILL) before its delivery worker runs, and the next server delivers them, once each.
 */

const main = fileURLToPath(new URL('../src/main.js', import.meta.url));
const secret = 'kill-test-secret-0123456789';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  for (const started = Date.now(); !check(); await sleep(50)) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
  }
}

async function serve(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; exited: Promise<void> }> {
  const child = spawn(process.execPath, [main, 'serve', '--port', '0'], {
    env: { ...process.env, HOST: '127.0.0.1', STORE: '', MONGODB_URI: '', MQTT_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  let url: string | undefined;
  await until('the server to listen', () => {
    const line = stdout.split('\n').find((text) => text.includes('"event":"listening"'));
    url = line === undefined ? undefined : (JSON.parse(line) as { url: string }).url;
    return url !== undefined;
  });
  return { child, url: url ?? '', exited };
}

describe('alert delivery across a server crash', function () {
  this.timeout(60_000);
  const children: ChildProcess[] = [];
  after(() => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('when the server is killed between "alert raised" and "sent", then the next server delivers each message once', async () => {
    const dataDir = scratchDataDir();
    const smtp = await startSmtpTestServer();
    const received: { headers: IncomingMessage['headers']; body: string }[] = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      const env = { HORTUS_DATA_DIR: dataDir };
      expect((await hortus(undefined, ['group', 'create', 'gh'], { env })).code).to.equal(0);
      const settings = '[{"tempMax":30},{"emailNotification":true},{"email":"grower@example.org"}]';
      expect((await hortus(undefined, ['group', 'set-settings', 'gh', settings], { env })).code).to.equal(0);
      const notify = await hortus(
        undefined,
        ['group', 'notify', 'gh', '--add-webhook', hookUrl, '--secret-stdin'],
        { env, stdin: Readable.from([secret]) },
      );
      expect(notify.code, notify.stderr).to.equal(0);

      const base = { ...env, SMTP_URL: smtp.url, AUTOMATION_TICK_MS: '50' };
      // The first server's delivery worker would first run after 10 minutes: it dies before.
      const first = await serve({ ...base, ALERT_DELIVERY_MS: '600000' });
      children.push(first.child);
      const posted = await fetch(`${first.url}/api/data/readings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([
          { group: 'gh', topic: 'esp/air/temperature', value: 35, time: new Date().toISOString() },
        ]),
      });
      expect(posted.status).to.equal(202);
      const file = new Database(join(dataDir, 'hortus.db'), { readonly: true, fileMustExist: true });
      const pending = (): number =>
        (file.prepare("SELECT count(*) AS n FROM outbox WHERE status = 'pending'").get() as { n: number }).n;
      try {
        await until('the alert to be queued', () => pending() === 2);
      } finally {
        file.close();
      }
      first.child.kill('SIGKILL');
      await first.exited;
      expect(received).to.have.length(0);
      expect(smtp.delivered).to.have.length(0);

      const second = await serve({ ...base, ALERT_DELIVERY_MS: '50' });
      children.push(second.child);
      await until('both messages to arrive', () => received.length >= 1 && smtp.delivered.length >= 1);
      await sleep(500); // more delivery rounds and engine ticks: nothing is sent again
      second.child.kill('SIGTERM');
      await second.exited;

      expect(received).to.have.length(1);
      expect(smtp.delivered).to.have.length(1);
      const [hook] = received;
      const payload = JSON.parse(hook?.body ?? '{}') as Record<string, unknown>;
      expect(payload).to.include({ group: 'gh', event: 'opened', topic: 'esp/air/temperature', value: 35 });
      expect(hook?.headers['x-hortus-signature']).to.equal(
        `sha256=${createHmac('sha256', secret)
          .update(hook?.body ?? '')
          .digest('hex')}`,
      );
      // The Standard Webhooks signature, as a receiver computes it from the whsec_ form of the secret.
      const id = String(hook?.headers['webhook-id']);
      const timestamp = String(hook?.headers['webhook-timestamp']);
      expect(Math.abs(Date.now() / 1000 - Number(timestamp))).to.be.below(300);
      expect(hook?.headers['webhook-signature']).to.equal(
        `v1,${createHmac('sha256', Buffer.from(secret, 'utf8'))
          .update(`${id}.${timestamp}.${hook?.body ?? ''}`)
          .digest('base64')}`,
      );
      expect(smtp.delivered[0]?.to).to.deep.equal(['grower@example.org']);
      // The subject holds °C, so it goes as RFC 2047 words; the body is quoted-printable.
      expect(smtp.delivered[0]?.data).to.match(/^Subject: =\?UTF-8\?Q\?=5BHortus=5D_gh=3A_Temperature/mu);
      expect(smtp.delivered[0]?.body).to.contain('is above its maximum of 30 =C2=B0C: 35 =C2=B0C at ');
      // No TIME_ZONE: Berlin time, the default.
      expect(smtp.delivered[0]?.body).to.match(/^Time: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d CES?T\r$/mu);
    } finally {
      receiver.close();
      await smtp.close();
    }
  });
});
