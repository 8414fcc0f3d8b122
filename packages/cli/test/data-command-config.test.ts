import { expect } from 'chai';
import { exitCodes } from '@hortus/cli';
import { hortus, scratchDataDir } from './harness.js';

/**
 * A data command opens the store and runs a use case: the settings of the HTTP server, TLS, MQTT and the
 * backups are `serve`'s, so a mistake in one of them must not stop an operator fixing data.
 */
describe('hortus data commands: only the store and core part of the configuration', () => {
  const serverOnlyMistakes = {
    CORS_ORIGINS: 'not an origin',
    PORT: 'eighty',
    MQTT_URL: 'ftp://broker',
    HTTPS_PORT: '-1',
    BACKUP_INTERVAL: 'sometimes',
  };

  it('when CORS_ORIGINS is not an origin, then device claim still registers the box', async () => {
    const env = { HORTUS_DATA_DIR: scratchDataDir(), CORS_ORIGINS: 'not an origin' };

    const claimed = await hortus(
      undefined,
      ['device', 'claim', '24:6F:28:AA:00:01', '-g', 'gh-1', '--json'],
      { env },
    );

    expect(claimed.stderr).to.equal('');
    expect(claimed.code).to.equal(exitCodes.ok);
    expect(JSON.parse(claimed.stdout)).to.include({ deviceId: '24:6F:28:AA:00:01', group: 'gh-1' });
  });

  it('when only server settings are wrong, then group create and group list run on the store', async () => {
    const env = { HORTUS_DATA_DIR: scratchDataDir(), ...serverOnlyMistakes };

    const created = await hortus(undefined, ['group', 'create', 'gh-1'], { env });
    const listed = await hortus(undefined, ['group', 'list', '--json'], { env });

    expect(created.code, created.stderr).to.equal(exitCodes.ok);
    expect(listed.code, listed.stderr).to.equal(exitCodes.ok);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((group) => group.name)).to.deep.equal([
      'gh-1',
    ]);
  });

  it('when a store or core setting is wrong, then a data command still refuses it with a usage error', async () => {
    const env = { HORTUS_DATA_DIR: scratchDataDir(), TIME_ZONE: 'Mars/Olympus' };

    const listed = await hortus(undefined, ['group', 'list'], { env });

    expect(listed.code).to.equal(exitCodes.usage);
    expect(listed.stderr).to.contain('TIME_ZONE');
  });

  it('when CORS_ORIGINS is not an origin, then serve and config check still refuse it', async () => {
    const env = { HORTUS_DATA_DIR: scratchDataDir(), CORS_ORIGINS: 'not an origin' };

    const checked = await hortus(undefined, ['config', 'check'], { env });

    expect(checked.code).to.equal(exitCodes.usage);
    expect(checked.stderr + checked.stdout).to.contain('CORS_ORIGINS');
  });
});
