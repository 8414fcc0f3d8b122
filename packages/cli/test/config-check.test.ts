import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrations, SCHEMA_VERSION } from '@hortus/adapter-sqlite';
import { expect } from 'chai';
import { knownVariables, unknownVariables } from '../src/app/known-variables.js';
import { hortus, scratchDataDir } from './harness.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The variables the settings parsers read: names passed to an env reader (`read('PORT')`,
 * `env['MQTT_URL']`), and the upper-case keys of the defaults tables in files that build one.
 */
function variablesRead(): Set<string> {
  const names = new Set<string>();
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const src = join(root, 'packages', pkg, 'src');
    let files: string[];
    try {
      files = sourceFiles(src);
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(
        /\b(?:env|integer|optional|read|onOff|days)\s*[([]\s*'([A-Z][A-Z0-9_]*)'/gu,
      )) {
        names.add(match[1] ?? '');
      }
      if (text.includes('envReader(')) {
        for (const match of text.matchAll(/^\s+([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+): /gmu))
          names.add(match[1] ?? '');
      }
    }
  }
  return names;
}

describe('hortus config check', () => {
  it('when a settings parser reads a variable, then config check knows it (a new setting is never reported as unknown)', () => {
    const read = [...variablesRead()];
    expect(read.length).to.be.greaterThan(60);
    // The OS user's name (consoleActor's fallback for the audit trail), not a Hortus setting.
    const notSettings = new Set(['USER', 'USERNAME']);
    expect(read.filter((name) => !knownVariables.includes(name) && !notSettings.has(name))).to.deep.equal([]);
  });

  it('when variables are misspelled or unknown under Hortus prefixes, then each is named, with the likely meant one when one is close; the rest of the environment is left alone', () => {
    expect(
      unknownVariables({
        HORTUS_DATADIR: '/srv',
        PORTT: '9000',
        MQTT_TOPICS: 'esp/#',
        MONGODB_PASSWORD: 'x',
        PORT: '8080',
        PATH: '/usr/bin',
        HOME: '/root',
        HOSTNAME: 'vm',
        LANG: 'C',
        HORTUS_TEST_STORE: 'sqlite',
      }),
    ).to.deep.equal([
      { name: 'HORTUS_DATADIR', didYouMean: 'HORTUS_DATA_DIR' },
      { name: 'MONGODB_PASSWORD' },
      { name: 'MQTT_TOPICS', didYouMean: 'MQTT_TOPIC' },
      { name: 'PORTT', didYouMean: 'PORT' },
    ]);
  });

  it('when run, then it prints the effective configuration with defaults, secrets and URL credentials masked, and warns about unknown variables (exit 0)', async () => {
    const secret = 'a-secret-of-forty-characters-00000000000';
    const { code, stdout } = await hortus(undefined, ['config', 'check'], {
      env: {
        HORTUS_DATA_DIR: scratchDataDir(),
        AUTH_SECRET: secret,
        SMTP_URL: 'smtp://mailer:mail-pw@mail.example:587',
        RATE_LIMIT_REDIS_URL: 'redis://limits:redis-pw@cache.example:6379/2',
        HORTUS_DATADIR: '/srv/hortus',
        PORTT: '9000',
      },
    });

    expect(code).to.equal(0);
    expect(stdout).to.match(/^port: +8080$/mu);
    expect(stdout).to.match(/^identity\.tokens\.secret: +\*\*\*$/mu);
    expect(stdout).to.match(/^mail\.smtpUrl: +smtp:\/\/\*\*\*@mail\.example:587$/mu);
    expect(stdout).not.to.contain(secret);
    expect(stdout).not.to.contain('mail-pw');
    expect(stdout).to.match(/^rateLimitRedisUrl: +redis:\/\/\*\*\*@cache\.example:6379\/2$/mu);
    expect(stdout).not.to.contain('redis-pw');
    expect(stdout).to.contain(
      'warning: HORTUS_DATADIR is not a Hortus setting (did you mean HORTUS_DATA_DIR?)',
    );
    expect(stdout).to.contain('warning: PORTT is not a Hortus setting (did you mean PORT?)');
  });

  it("when MQTT_URL is set, then it shows the installation's shared group and client id form, the ones kept in the store", async () => {
    const env = {
      HORTUS_DATA_DIR: scratchDataDir(),
      MQTT_URL: 'mqtt://hortus:broker-pw@127.0.0.1:1883',
      MQTT_PASSWORD: 'other-broker-pw',
    };
    const first = await hortus(undefined, ['--json', 'config', 'check'], { env });
    const second = await hortus(undefined, ['--json', 'config', 'check'], { env });

    expect(first.code).to.equal(0);
    const report = JSON.parse(first.stdout) as {
      configuration: { mqtt: Record<string, unknown> };
      mqtt: { clientId: string; sharedGroup: string };
      warnings: string[];
    };
    expect(report.configuration.mqtt).to.deep.include({
      url: 'mqtt://***@127.0.0.1:1883',
      password: '***',
    });
    expect(report.mqtt.sharedGroup).to.match(/^hortus-[0-9a-f]{32}$/u);
    expect(report.mqtt.clientId).to.match(/^hortus-[0-9a-f]{8}-<random per process>$/u);
    expect(JSON.parse(second.stdout)).to.deep.include({ mqtt: report.mqtt });
    expect(report.warnings).to.deep.equal([]);
    expect(first.stdout).not.to.contain('pw');
    expect(report.mqtt).to.include({ discovery: false, commands: false });
  });

  it('when MQTT_DISCOVERY=on, then commands are shown on too (they follow discovery unless MQTT_COMMANDS is set)', async () => {
    const env = {
      HORTUS_DATA_DIR: scratchDataDir(),
      MQTT_URL: 'mqtt://127.0.0.1:1883',
      MQTT_DISCOVERY: 'on',
    };
    const on = await hortus(undefined, ['config', 'check'], { env });
    const off = await hortus(undefined, ['config', 'check'], { env: { ...env, MQTT_COMMANDS: 'off' } });

    expect(on.stdout).to.match(/mqtt\.discovery \(effective\):\s+on/u);
    expect(on.stdout).to.match(/mqtt\.commands \(effective\):\s+on/u);
    expect(off.stdout).to.match(/mqtt\.commands \(effective\):\s+off/u);
  });

  it('when the store has been migrated, then it lists the applied migrations, read without starting the store', async () => {
    const env = { HORTUS_DATA_DIR: scratchDataDir() };
    const fresh = await hortus(undefined, ['--json', 'config', 'check'], { env });
    expect(JSON.parse(fresh.stdout).schema).to.include({ version: 0, known: SCHEMA_VERSION });
    expect(existsSync(join(env.HORTUS_DATA_DIR, 'hortus.db')), 'config check created no file').to.equal(
      false,
    );
    expect((await hortus(undefined, ['group', 'list'], { env })).code).to.equal(0);

    const json = await hortus(undefined, ['--json', 'config', 'check'], { env });
    const text = await hortus(undefined, ['config', 'check'], { env });

    const schema = JSON.parse(json.stdout).schema as { version: number; applied: { version: number }[] };
    expect(schema.version).to.equal(SCHEMA_VERSION);
    expect(schema.applied.map(({ version }) => version)).to.deep.equal(
      migrations.map(({ version }) => version),
    );
    expect(text.stdout).to.match(
      new RegExp(
        `store\\.schema:\\s+${SCHEMA_VERSION} \\(this Hortus knows up to ${SCHEMA_VERSION}; up to date\\)`,
        'u',
      ),
    );
    expect(text.stdout).to.match(/store\.migration 1:\s+applied \d{4}-/u);
  });

  it('when BACKUP_DIR is set, then it shows the newest backup there and its age, or none yet', async () => {
    const dir = scratchDataDir();
    const env = { HORTUS_DATA_DIR: scratchDataDir(), BACKUP_DIR: dir };
    const none = await hortus(undefined, ['config', 'check'], { env });
    expect(none.stdout).to.match(/backups\.newest:\s+none yet/u);
    mkdirSync(dir, { recursive: true });
    const made = new Date(Date.now() - 3 * 3_600_000 - 5 * 60_000);
    writeFileSync(join(dir, `hortus-${made.toISOString().replace(/:/gu, '-').replace('.', '-')}.db`), '');

    const text = await hortus(undefined, ['config', 'check'], { env });
    const json = await hortus(undefined, ['--json', 'config', 'check'], { env });

    expect(text.stdout).to.match(/backups\.newest:\s+\S+hortus-\S+\.db \(3 h 5 min old\)/u);
    expect(JSON.parse(json.stdout).backups.ageSeconds).to.be.within(3 * 3600 + 299, 3 * 3600 + 330);
  });

  it('when the configuration is invalid, then it exits 2 naming the problem', async () => {
    const { code, stderr } = await hortus(undefined, ['config', 'check'], {
      env: { HORTUS_DATA_DIR: scratchDataDir(), PORT: 'eighty' },
    });
    expect(code).to.equal(2);
    expect(stderr).to.contain('PORT');
  });
});
