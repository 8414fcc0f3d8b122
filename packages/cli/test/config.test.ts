import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from '@hortus/core';
import { createJsonLogger, loadConfig } from '@hortus/cli';
import { expect } from 'chai';
import { Capture, hortus } from './harness.js';

describe('loadConfig', () => {
  it('when nothing is set, then the defaults: port 8080, the SQLite file in ./data, Europe/Berlin (the boxes’ zone), the React dev origin', () => {
    const config = loadConfig({});
    expect(config).to.deep.include({
      port: 8080,
      host: '127.0.0.1',
      corsOrigins: ['http://localhost:3000'],
      store: 'sqlite',
      timeZone: 'Europe/Berlin',
      commitsCacheMs: 60000,
      bodyLimitBytes: 1048576,
    });
    expect(config.codeHost).to.deep.equal({ apiUrl: 'https://api.github.com', timeoutMs: 5000 });
    expect(config.sqlite?.file).to.equal(resolve('data', 'hortus.db'));
  });

  it('when APP_URL is set, then its host is allowed beside ALLOWED_HOSTS; ALLOWED_HOSTS=* stays any host', () => {
    const config = loadConfig({ APP_URL: 'https://greenhouse.example.org/app', ALLOWED_HOSTS: 'hortus.lan' });
    expect(config.allowedHosts).to.deep.equal(['hortus.lan', 'greenhouse.example.org']);
    expect(
      loadConfig({ APP_URL: 'https://greenhouse.example.org', ALLOWED_HOSTS: '*' }).allowedHosts,
    ).to.deep.equal(['*']);
    expect(
      loadConfig({ APP_URL: 'http://hortus.lan:8080', ALLOWED_HOSTS: 'hortus.lan' }).allowedHosts,
    ).to.deep.equal(['hortus.lan']);
  });

  it('when HORTUS_DATA_DIR is set, then the file is hortus.db in it; STORE=memory needs no file', () => {
    expect(loadConfig({ HORTUS_DATA_DIR: '/var/lib/hortus' }).sqlite?.file).to.equal(
      '/var/lib/hortus/hortus.db',
    );
    const memory = loadConfig({ STORE: 'memory' });
    expect(memory.store).to.equal('memory');
    expect(memory).not.to.have.property('sqlite');
  });

  it('when values are given, then they are read and normalised', () => {
    const config = loadConfig({
      PORT: '3001',
      CORS_ORIGINS: ' https://App.Example.org/ ,http://localhost:3000',
      MONGODB_URI: 'mongodb://127.0.0.1:27017/hortus',
      TIME_ZONE: 'Europe/Berlin',
      CODE_HOST_REPOSITORY: 'hortus-org/hortus',
      CODE_HOST_TOKEN: 't0ken',
      CODE_HOST_API_URL: 'http://127.0.0.1:9999/',
    });
    expect(config).to.deep.include({
      port: 3001,
      corsOrigins: ['https://app.example.org', 'http://localhost:3000'],
      store: 'mongodb',
      mongodbUri: 'mongodb://127.0.0.1:27017/hortus',
      timeZone: 'Europe/Berlin',
    });
    expect(config.codeHost).to.deep.equal({
      apiUrl: 'http://127.0.0.1:9999',
      repository: 'hortus-org/hortus',
      token: 't0ken',
      timeoutMs: 5000,
    });
  });

  it('when the limits on stored data are set, then they reach the config; unset ones keep their defaults', () => {
    const config = loadConfig({ MAX_CLOCK_SKEW_MS: '60000', MAX_TOPICS_PER_GROUP: '10' });
    expect(config.limits).to.deep.equal({
      maxClockSkewMs: 60_000,
      maxTopicsPerGroup: 10,
      maxDevicesPerGroup: 1000,
      maxChartsPerUser: 200,
      maxOpenNotificationsPerGroup: 1000,
      alertReopenMs: 900_000,
      alertRepeatMs: 1_800_000,
    });
  });

  it('when a limit is not a whole number in its bounds, then the ConfigError names it', () => {
    expect(() => loadConfig({ MAX_TOPICS_PER_GROUP: '0', MAX_CLOCK_SKEW_MS: 'soon' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals([
        'MAX_CLOCK_SKEW_MS must be a whole number from 0 to 604800000, got "soon"',
        'MAX_TOPICS_PER_GROUP must be a whole number from 1 to 100000, got "0"',
      ]);
  });

  it('when retention is set, then it reaches the config; negative or non-numeric days are ConfigErrors', () => {
    expect(loadConfig({}).retention).to.deep.equal({});
    expect(loadConfig({ RETENTION_DAYS: '90', ROLLUP_RETENTION_DAYS: '730' }).retention).to.deep.equal({
      readingDays: 90,
      rollupDays: 730,
    });
    expect(() => loadConfig({ RETENTION_DAYS: '-1', ROLLUP_RETENTION_DAYS: 'a year' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.deep.equals([
        'RETENTION_DAYS must be a whole number of days from 1 to 36500 or off, got "-1"',
        'ROLLUP_RETENTION_DAYS must be a whole number of days from 1 to 36500 or off, got "a year"',
      ]);
  });

  it('when several values are bad, then one ConfigError lists every problem', () => {
    const bad = () =>
      loadConfig({
        PORT: '80a',
        CORS_ORIGINS: 'localhost:3000,https://ok.org/path',
        STORE: 'mongodb',
        TIME_ZONE: 'Mars/Olympus',
        CODE_HOST_REPOSITORY: 'just-a-name',
        CODE_HOST_TIMEOUT_MS: '30000',
        COMMITS_CACHE_MS: '1000',
      });
    expect(bad).to.throw(ConfigError);
    try {
      bad();
    } catch (error) {
      const problems = (error as ConfigError).problems;
      expect(problems).to.have.length(8);
      expect(problems.join('\n'))
        .to.include('PORT')
        .and.include('CORS_ORIGINS')
        .and.include('MONGODB_URI')
        .and.include('TIME_ZONE')
        .and.include('CODE_HOST_REPOSITORY')
        .and.include('CODE_HOST_TIMEOUT_MS')
        .and.include('COMMITS_CACHE_MS');
      expect((error as Error).message).to.match(/^Invalid configuration:\n {2}- PORT/u);
    }
  });

  it('when STORE names an unknown store, then the error says which stores exist', () => {
    expect(() => loadConfig({ STORE: 'redis' })).to.throw(
      ConfigError,
      'STORE must be one of: sqlite, memory, mongodb',
    );
  });

  describe('automations, ingest and MQTT', () => {
    it('when nothing is set, then automations on every 10 s, a 4 MiB ingest limit and no MQTT bridge', () => {
      const config = loadConfig({});
      expect(config).to.deep.include({
        automations: true,
        automationTickMs: 10000,
        ingestBodyLimitBytes: 4 * 1024 * 1024,
      });
      expect(config).to.not.have.property('mqtt');
    });

    it('when they are set, then they are read; MQTT_* become the bridge settings', () => {
      const config = loadConfig({
        AUTOMATIONS: 'OFF',
        AUTOMATION_TICK_MS: '500',
        INGEST_BODY_LIMIT_BYTES: '2097152',
        MQTT_URL: 'mqtt://broker.local:1883',
        MQTT_TOPIC: 'farm/esp/#',
        MQTT_PUBLISH_PREFIX: 'farm',
        MQTT_USERNAME: 'hortus',
        MQTT_PASSWORD: ' s3cret ',
      });
      expect(config).to.deep.include({
        automations: false,
        automationTickMs: 500,
        ingestBodyLimitBytes: 2097152,
      });
      expect(config.mqtt).to.deep.equal({
        url: 'mqtt://broker.local:1883',
        topicFilter: 'farm/esp/#',
        publishPrefix: 'farm',
        username: 'hortus',
        password: ' s3cret ',
      });
    });

    it('when they are bad, then each is named in the ConfigError', () => {
      try {
        loadConfig({
          AUTOMATIONS: 'sometimes',
          AUTOMATION_TICK_MS: '120000',
          INGEST_BODY_LIMIT_BYTES: '10',
          MQTT_URL: 'http://broker.local',
          MQTT_TOPIC: 'esp/#/more',
        });
        expect.fail('loadConfig accepted bad values');
      } catch (error) {
        expect(error).to.be.instanceOf(ConfigError);
        expect((error as ConfigError).problems).to.deep.equal([
          'INGEST_BODY_LIMIT_BYTES must be a whole number from 1024 to 67108864, got "10"',
          'AUTOMATIONS must be on or off, got "sometimes"',
          'AUTOMATION_TICK_MS must be a whole number from 10 to 60000, got "120000"',
          'MQTT_URL must use one of mqtt: mqtts: tcp: ssl: ws: wss: (got http:)',
          'MQTT_TOPIC is not a valid topic filter',
        ]);
      }
    });
  });
});

describe('LOG_LEVEL and env files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hortus-env-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const envFile = async (text: string): Promise<string> => {
    const path = join(dir, 'hortus.env');
    await writeFile(path, text);
    return path;
  };

  it('when LOG_LEVEL is unset, then it is info; when it is not a level, then the ConfigError names it and the levels', () => {
    expect(loadConfig({}).logLevel).to.equal('info');
    expect(loadConfig({ LOG_LEVEL: 'WARN' }).logLevel).to.equal('warn');
    expect(() => loadConfig({ LOG_LEVEL: 'loud', PORT: 'x' }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.includes('LOG_LEVEL must be one of: debug, info, warn, error, got "loud"');
  });

  it('when the logger is at warn, then debug and info lines are left out and warn and error written', () => {
    let text = '';
    const logger = createJsonLogger((line) => (text += line), undefined, 'warn');

    logger.debug?.('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    logger.flush?.();

    expect(
      text
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { event: string }).event),
    ).to.deep.equal(['w', 'e']);
  });

  it('when the format is text, then a line is time, level, event and key=value fields, controls escaped', () => {
    let text = '';
    const at = new Date('2026-11-26T09:00:04.089Z');
    const logger = createJsonLogger(
      (line) => (text += line),
      () => at,
      'info',
      'text',
    );

    logger.info('request', { method: 'GET', path: '/api/x', status: 200, ms: 1.2 });
    logger.warn('malformed request', { error: 'Parse Error: \u001b[2J "x"', code: undefined });
    logger.flush?.();

    expect(text).to.equal(
      '09:00:04.089 info  request method=GET path=/api/x status=200 ms=1.2\n' +
        '09:00:04.089 warn  malformed request error="Parse Error: \\u001b[2J \\"x\\""\n',
    );
  });

  it('when LOG_FORMAT is not auto, json or text, then it is a configuration error', () => {
    expect(() => loadConfig({ LOG_FORMAT: 'pretty' })).to.throw(ConfigError, 'LOG_FORMAT must be one of');
    expect(loadConfig({}).logFormat).to.equal('auto');
  });

  it('when `hortus serve` writes to a terminal, then its lines are for people; LOG_FORMAT=json keeps JSON', async () => {
    const run = async (env: Record<string, string>): Promise<string> => {
      const signals = new EventEmitter();
      const stdout = new Capture(true);
      const exited = hortus(undefined, ['serve', '--memory', '--port', '0'], {
        env: { HOST: '127.0.0.1', ...env },
        signals,
        stdout,
      });
      // Until it listens (both forms name the event), however long a loaded machine takes to start it.
      for (const until = Date.now() + 30_000; !stdout.text.includes('listening') && Date.now() < until;)
        await sleep(20);
      signals.emit('SIGTERM');
      expect((await exited).code).to.equal(0);
      return stdout.text;
    };
    expect(await run({})).to.match(
      /^\d\d:\d\d:\d\d\.\d{3} info {2}listening url=http:\/\/127\.0\.0\.1:\d+ /mu,
    );
    expect(JSON.parse((await run({ LOG_FORMAT: 'json' })).split('\n')[0] ?? '')).to.have.property('event');
  });

  it('when `hortus serve` runs with LOG_LEVEL=error, then its info lines (listening, stopped) are not written', async () => {
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exited = hortus(undefined, ['serve', '--memory', '--port', '0'], {
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'error' },
      signals,
      stdout,
    });
    await sleep(500);
    signals.emit('SIGTERM');

    expect((await exited).code).to.equal(0);
    expect(stdout.text).to.equal('');
  });

  it('when --env-file names a file, then its settings are used, but a variable of the real environment wins', async () => {
    const path = await envFile('# a comment\nSTORE=memory\n');

    const fromFile = await hortus(undefined, ['group', 'list', '--env-file', path]);
    const overridden = await hortus(undefined, ['group', 'list', '--env-file', path], {
      env: { STORE: 'sqlite' },
    });

    expect(fromFile.code).to.equal(2);
    expect(fromFile.stderr).to.contain('STORE=memory selects the in-memory store');
    expect(overridden.code).to.equal(0);
  });

  it('when HORTUS_ENV_FILE names a file, then it is read; a bad LOG_LEVEL in it is a configuration error', async () => {
    const path = await envFile('LOG_LEVEL=chatty\n');

    const outcome = await hortus(undefined, ['group', 'list'], { env: { HORTUS_ENV_FILE: path } });

    expect(outcome.code).to.equal(2);
    expect(outcome.stderr).to.contain('LOG_LEVEL must be one of: debug, info, warn, error, got "chatty"');
  });

  it('when the named env file does not exist, then it exits 2 and says which file', async () => {
    const outcome = await hortus(undefined, ['group', 'list', '--env-file', join(dir, 'missing.env')]);

    expect(outcome.code).to.equal(2);
    expect(outcome.stderr).to.contain('cannot read the env file');
    expect(outcome.stderr).to.contain('missing.env');
  });
});
