import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  ALERT_OUTBOX_REPOSITORY,
  type AlertOutboxRepository,
  CreateGroup,
  type GroupNotifySettings,
} from '@hortus/core';
import { expect } from 'chai';
import { type Container } from 'inversify';
import { hortus, type StoreContainer, storeContainer } from './harness.js';

const stdin = (text: string): Readable => Readable.from([text]);
/** The masked form: origin, `/…` and the first 6 hex digits of the whole URL's SHA-256. */
const masked = (url: string): string =>
  `${new URL(url).origin}/… #${createHash('sha256').update(new URL(url).toString()).digest('hex').slice(0, 6)}`;
const pattern = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/gu, '\\$&');
const SECRET = 'stdin-secret-0123456789';
const HOOK = 'https://hook%20user:pa55word@hooks.example.org/services/T0KEN-in-the-path?key=querytoken';

describe('hortus group notify: hook URLs and secrets stay out of sight', () => {
  let container: Container;
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
    await container.get(CreateGroup).execute({ name: 'gh' });
  });
  afterEach(async () => {
    await store.close();
  });

  const stored = async (): Promise<GroupNotifySettings | undefined> =>
    container.get<AlertOutboxRepository>(ALERT_OUTBOX_REPOSITORY).getSettings('gh');

  it('when a hook with tokens is added with --secret-stdin, then it is stored whole and shown masked, and neither token nor secret is printed', async () => {
    const added = await hortus(
      container,
      ['--json', 'group', 'notify', 'gh', '--add-webhook', HOOK, '--secret-stdin'],
      { stdin: stdin(`${SECRET}\n`) },
    );
    expect(added.code, added.stderr).to.equal(0);
    expect(added.stdout + added.stderr).not.to.match(/T0KEN|querytoken|pa55word|hook%20user|stdin-secret/u);
    const shown = JSON.parse(added.stdout) as { webhooks: { url: string; secret: string }[] };
    expect(shown.webhooks).to.deep.equal([{ url: masked(HOOK), format: 'json', secret: '…6789' }]);
    expect((await stored())?.webhooks).to.deep.equal([{ url: new URL(HOOK).toString(), secret: SECRET }]);

    const second = await hortus(
      container,
      ['group', 'notify', 'gh', '--add-webhook', 'https://ntfy.example.org/gh', '--secret-stdin'],
      { stdin: stdin('another-secret-of-16-chars') },
    );
    expect(second.code, second.stderr).to.equal(0);
    const listed = await hortus(container, ['group', 'notify', 'gh']);
    expect(listed.stdout).to.match(
      new RegExp(`^Webhook 1: +${pattern(masked(HOOK))} \\(json, secret …6789\\)$`, 'mu'),
    );
    expect(listed.stdout).to.match(
      new RegExp(
        `^Webhook 2: +${pattern(masked('https://ntfy.example.org/gh'))} \\(json, secret …hars\\)$`,
        'mu',
      ),
    );
    expect(listed.stdout).not.to.match(/T0KEN|querytoken|pa55word|\\n/u);
  });

  it('when the secret is in a file, then --secret-file reads it (without the final line break)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hortus-secret-'));
    try {
      const file = join(dir, 'hook.secret');
      writeFileSync(file, `${SECRET}\n`, { mode: 0o600 });
      const added = await hortus(container, [
        'group',
        'notify',
        'gh',
        '--add-webhook',
        HOOK,
        '--secret-file',
        file,
      ]);
      expect(added.code, added.stderr).to.equal(0);
      expect(added.stdout).not.to.contain(SECRET);
      expect((await stored())?.webhooks[0]?.secret).to.equal(SECRET);

      const missing = await hortus(container, [
        'group',
        'notify',
        'gh',
        '--add-webhook',
        HOOK,
        '--secret-file',
        join(dir, 'nope'),
      ]);
      expect(missing.code).to.not.equal(0);
      expect(missing.stderr).to.contain('ENOENT');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when --secret is given as an argument, then it still works, with a warning about the process list', async () => {
    const added = await hortus(container, [
      'group',
      'notify',
      'gh',
      '--add-webhook',
      HOOK,
      '--secret',
      SECRET,
    ]);
    expect(added.code, added.stderr).to.equal(0);
    expect(added.stderr).to.match(/warning: --secret .*process list.*--secret-stdin or --secret-file/u);
    expect((await stored())?.webhooks[0]?.secret).to.equal(SECRET);
  });

  it('when secrets come from two places, or an empty one from stdin, then the command is refused and nothing is stored', async () => {
    const both = await hortus(
      container,
      ['group', 'notify', 'gh', '--add-webhook', HOOK, '--secret-stdin', '--secret', SECRET],
      { stdin: stdin(SECRET) },
    );
    expect(both.code).to.not.equal(0);
    const empty = await hortus(
      container,
      ['group', 'notify', 'gh', '--add-webhook', HOOK, '--secret-stdin'],
      {
        stdin: stdin('\n'),
      },
    );
    expect(empty.code).to.not.equal(0);
    expect(empty.stderr).to.contain('empty secret');
    expect(await stored()).to.equal(undefined);
  });

  it('when a hook is removed by its masked form as listed, then it goes; an unknown one is not found without echoing its token', async () => {
    const added = await hortus(
      container,
      ['group', 'notify', 'gh', '--add-webhook', HOOK, '--secret-stdin'],
      {
        stdin: stdin(SECRET),
      },
    );
    expect(added.code, added.stderr).to.equal(0);
    const unknown = await hortus(container, [
      'group',
      'notify',
      'gh',
      '--remove-webhook',
      'https://hooks.example.org/other/secret-path-token',
    ]);
    expect(unknown.code).to.not.equal(0);
    expect(unknown.stderr).to.contain('has no webhook https://hooks.example.org/… #');
    expect(unknown.stderr).not.to.contain('secret-path-token');

    const removed = await hortus(container, ['group', 'notify', 'gh', '--remove-webhook', masked(HOOK)]);
    expect(removed.code, removed.stderr).to.equal(0);
    expect((await stored())?.webhooks).to.deep.equal([]);
  });

  it('when no secret is given, then a Standard Webhooks secret (whsec_ + base64 of 32 bytes) is generated and printed once', async () => {
    const added = await hortus(container, ['--json', 'group', 'notify', 'gh', '--add-webhook', HOOK]);
    expect(added.code, added.stderr).to.equal(0);
    const secret = (await stored())?.webhooks[0]?.secret ?? '';
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/u);
    expect(Buffer.from(secret.slice(6), 'base64')).to.have.length(32);
    const shown = JSON.parse(added.stdout) as { webhooks: { secret: string }[] };
    expect(shown.webhooks[0]?.secret).to.equal(secret);
  });

  it('when a whsec_ secret is not base64 of 24 to 64 bytes, then it is refused and nothing is stored', async () => {
    for (const bad of [
      'whsec_not*base64*at*all*but*long*enough',
      `whsec_${Buffer.alloc(16).toString('base64')}`,
    ]) {
      const refused = await hortus(
        container,
        ['group', 'notify', 'gh', '--add-webhook', HOOK, '--secret-stdin'],
        { stdin: stdin(bad) },
      );
      expect(refused.code).to.not.equal(0);
      expect(refused.stderr).to.contain('whsec_ must be base64 of 24 to 64 bytes');
    }
    expect(await stored()).to.equal(undefined);
  });

  it('when a hook is added with --format ntfy, then the format is stored with it and listed; json stays the default', async () => {
    const ntfy = await hortus(container, [
      'group',
      'notify',
      'gh',
      '--add-webhook',
      'https://ntfy.example.org/gh',
      '--format',
      'ntfy',
    ]);
    expect(ntfy.code, ntfy.stderr).to.equal(0);
    expect(ntfy.stdout).to.match(
      /^Webhook 1: +https:\/\/ntfy\.example\.org\/… #[0-9a-f]{6} \(ntfy, secret whsec_/mu,
    );
    await hortus(container, ['group', 'notify', 'gh', '--add-webhook', 'https://hooks.example.org/x']);
    const hooks = (await stored())?.webhooks ?? [];
    expect(hooks.map((hook) => hook.format)).to.deep.equal(['ntfy', undefined]);
  });

  it('when --format is unknown, or given without --add-webhook, then the command is refused and nothing is stored', async () => {
    const unknown = await hortus(container, [
      'group',
      'notify',
      'gh',
      '--add-webhook',
      'https://hooks.example.org/x',
      '--format',
      'teams',
    ]);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.match(/ntfy, gotify, slack, discord|"teams" is invalid/u);
    const alone = await hortus(container, ['group', 'notify', 'gh', '--format', 'slack']);
    expect(alone.code).to.equal(2);
    expect(alone.stderr).to.contain('--format goes with --add-webhook');
    expect(await stored()).to.equal(undefined);
  });
});
