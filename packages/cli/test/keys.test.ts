import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Authenticate } from '@hortus/core';
import { exitCodes } from '@hortus/cli';
import { type Container } from 'inversify';
import { Capture, dropTestDatabase, hortus, type StoreContainer, storeContainer } from './harness.js';

const secretPattern = /hk_[A-Za-z0-9_-]{43}/u;

/** The one secret printed in a command's output. */
function secretIn(stdout: string): string {
  const found = stdout.match(new RegExp(secretPattern, 'gu')) ?? [];
  expect(new Set(found).size, stdout).to.equal(1);
  return found[0] ?? '';
}

describe('hortus keys', () => {
  let container: Container;
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    // The harness's container already binds the key secrets (nodeCryptoModule), as the application does.
    container = store.container;
  });
  afterEach(async () => {
    await store.close();
  });
  const authenticate = (secret: string) => container.get(Authenticate).execute(secret);

  for (const path of [['keys'], ['keys', 'create'], ['keys', 'list'], ['keys', 'revoke']]) {
    it(`when asked for help on "hortus ${path.join(' ')}", then it prints usage with an example`, async () => {
      const { code, stdout } = await hortus(undefined, [...path, '--help']);
      expect(code).to.equal(0);
      expect(stdout).to.match(new RegExp(`^Usage: hortus ${path.join(' ')}`, 'u'));
      expect(stdout).to.match(/Examples?:\n {2}\$ hortus keys /u);
    });
  }

  it('when a key is created, then its secret is printed once, works, and appears nowhere in the list', async () => {
    const created = await hortus(container, [
      'keys',
      'create',
      '--name',
      'dashboard',
      '--kind',
      'client',
      '-g',
      'a',
      '-g',
      'b',
    ]);

    expect(created.code).to.equal(0);
    const secret = secretIn(created.stdout);
    expect(created.stdout).to.contain(`Authorization: Bearer ${secret}`);
    expect(await authenticate(secret)).to.deep.include({
      name: 'dashboard',
      kind: 'client',
      groups: ['a', 'b'],
    });

    const listed = await hortus(container, ['keys', 'list']);
    expect(listed.stdout).not.to.contain(secret);
    expect(listed.stdout.split('\n')[0]).to.match(/^ID +NAME +KIND +GROUPS +CREATED +REVOKED$/u);
    expect(listed.stdout).to.match(/dashboard +client +a, b +\d{4}-/u);
  });

  it('when created with --json, then the answer holds the key and the secret', async () => {
    const { code, stdout } = await hortus(container, [
      'keys',
      'create',
      '-n',
      'ops',
      '-k',
      'admin',
      '--json',
    ]);

    expect(code).to.equal(0);
    const answer = JSON.parse(stdout) as { key: { kind: string; groups: string[] }; secret: string };
    expect(answer.key).to.deep.include({ kind: 'admin', groups: [] });
    expect(answer.secret).to.match(secretPattern);
    expect(await authenticate(answer.secret)).to.not.equal(undefined);
  });

  it('when a key is revoked, then it lists as revoked and its secret stops working; an unknown id exits 3', async () => {
    const { stdout } = await hortus(container, ['keys', 'create', '-n', 'box-1', '-k', 'device', '-g', 'gh']);
    const secret = secretIn(stdout);
    const id = (await authenticate(secret))?.id ?? '';

    const revoked = await hortus(container, ['keys', 'revoke', id]);
    const unknown = await hortus(container, ['keys', 'revoke', 'ffffffffffffffffffffffff']);

    expect(revoked.code).to.equal(0);
    expect(revoked.stdout).to.match(/Revoked: +\d{4}-\d{2}-\d{2} \d\d:/u);
    expect(await authenticate(secret)).to.equal(undefined);
    expect(unknown).to.deep.include({ code: exitCodes.notFound, stderr: 'hortus: Access key not found\n' });
    const listed = JSON.parse((await hortus(container, ['keys', 'list', '--json'])).stdout) as {
      revokedAt?: string;
    }[];
    expect(listed.map((key) => typeof key.revokedAt)).to.deep.equal(['string']);
  });

  it('when the kind and groups do not fit together or the kind is unknown, then it exits 2 and creates nothing', async () => {
    const attempts = [
      ['-n', 'box', '-k', 'device'],
      ['-n', 'box', '-k', 'device', '-g', 'a', '-g', 'b'],
      ['-n', 'ops', '-k', 'admin', '-g', 'a'],
      ['-n', 'x', '-k', 'root'],
      ['-k', 'client'],
    ];
    for (const argv of attempts) {
      const { code, stdout } = await hortus(container, ['keys', 'create', ...argv]);
      expect(code, argv.join(' ')).to.equal(exitCodes.usage);
      expect(stdout).to.equal('');
    }
    expect((await hortus(container, ['keys', 'list'])).stdout).to.match(/^No access keys/u);
  });

  it('when STORE=memory, then keys commands refuse like every data command', async () => {
    const { code, stderr } = await hortus(undefined, ['keys', 'list'], { env: { STORE: 'memory' } });

    expect(code).to.equal(exitCodes.usage);
    expect(stderr).to.contain('keys list needs a persistent store');
  });

  describe('against MongoDB with hortus serve', function () {
    this.timeout(30_000);
    const uri = process.env['MONGODB_URI']?.trim() ?? '';
    const env = {
      MONGODB_URI: uri,
      MONGODB_DB: `hortus_keys_${randomBytes(4).toString('hex')}`,
      HOST: '127.0.0.1',
    };

    after(async () => {
      if (uri !== '') await dropTestDatabase(env);
    });

    (uri === '' ? it.skip : it)(
      'when the first key is created with the CLI, then the server requires it, and after revoking it refuses it',
      async () => {
        const created = await hortus(undefined, ['keys', 'create', '-n', 'ops', '-k', 'admin'], { env });
        expect(created.code, created.stderr).to.equal(0);
        const secret = secretIn(created.stdout);

        const signals = new EventEmitter();
        const stdout = new Capture();
        const serving = hortus(undefined, ['serve', '--port', '0'], {
          env: { ...env, AUTH_CACHE_MS: '0' },
          signals,
          stdout,
        });
        let url: string | undefined;
        for (let attempt = 0; attempt < 400 && url === undefined; attempt += 1) {
          url = /"event":"listening".*?"url":"([^"]+)"/u.exec(stdout.text)?.[1];
          if (url === undefined) await sleep(25);
        }
        try {
          expect(url, stdout.text).to.be.a('string');
          const call = (headers: Record<string, string> = {}) =>
            fetch(`${url}/api/group/checkgroup?group=g`, { headers });
          const bearer = { authorization: `Bearer ${secret}` };

          expect((await call()).status).to.equal(401);
          expect((await call(bearer)).status).to.equal(200);

          const id =
            (
              JSON.parse((await hortus(undefined, ['keys', 'list', '--json'], { env })).stdout) as {
                id: string;
              }[]
            )[0]?.id ?? '';
          expect((await hortus(undefined, ['keys', 'revoke', id], { env })).code).to.equal(0);
          expect((await call(bearer)).status).to.equal(401);
          expect((await fetch(`${url}/healthz`)).status).to.equal(200);
        } finally {
          signals.emit('SIGTERM');
          expect((await serving).code).to.equal(0);
        }
      },
    );
  });
});
