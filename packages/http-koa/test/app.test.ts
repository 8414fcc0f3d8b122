import { request } from 'node:http';
import { type AppOnMemory, expect, startAppOnMemory } from './harness.js';

/**
 * The transport on its own: the routes answer through the core's use cases on the memory store, with no
 * CLI, no persistent store and no network beyond loopback. Every route on every store is in @hortus/e2e.
 */
describe('the HTTP transport composed without the CLI (memory store)', () => {
  let app: AppOnMemory;
  beforeEach(async () => {
    app = await startAppOnMemory();
  });
  afterEach(async () => {
    await app.close();
  });

  it('when a reading is posted, then the latest data of its group answers it', async () => {
    const posted = await fetch(`${app.url}/api/data/readings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ group: 'gh-1', topic: 'esp/air/temperature', value: 21.5 }),
    });
    expect(posted.status).to.equal(202);
    expect(await posted.json()).to.deep.include({ accepted: 1, stored: 1 });

    const latest = await fetch(`${app.url}/api/data/latestdata/Temperature?groupId=gh-1`);
    expect(latest.status).to.equal(200);
    const [reading] = (await latest.json()) as { topic: string; value: number }[];
    expect(reading).to.deep.include({ topic: 'esp/air/temperature', value: 21.5 });
  });

  it('when a request names a host that is not allowed, then it answers 421 and logs no error', async () => {
    // fetch may not set Host; node:http sends what it is given, as a DNS-rebinding page's browser would.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      request(
        `${app.url}/api/group/checkGroup?group=gh-1`,
        { headers: { host: 'rebinding.example' } },
        (reply) => {
          reply.resume();
          resolve(reply.statusCode);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(status).to.equal(421);
    expect(app.logger.lines.filter((line) => line.level === 'error')).to.deep.equal([]);
  });

  it('when keys are on and no credential is sent, then a data route answers 401 and the reference stays open', async () => {
    await app.close();
    app = await startAppOnMemory({ AUTH: 'on' });
    expect((await fetch(`${app.url}/api/data/latestdata/all?groupId=gh-1`)).status).to.equal(401);
    expect((await fetch(`${app.url}/api/openapi.json`)).status).to.equal(200);
  });
});
