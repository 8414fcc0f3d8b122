import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Capture, hortus, scratchDataDir } from './harness.js';

interface LogLine {
  readonly event: string;
  readonly [field: string]: unknown;
}

describe('retention in the background (hortus serve on the SQLite store)', function () {
  // Several CLI runs and a serve: beyond the default 10 s on a machine running two test runs.
  this.timeout(60_000);
  it('when RETENTION_DAYS is set, then old readings are purged soon after the start, the count is logged, and a group override applies', async () => {
    const dataDir = scratchDataDir();
    const env = { HORTUS_DATA_DIR: dataDir, HOST: '127.0.0.1', RETENTION_DAYS: '30', AUTOMATIONS: 'off' };
    const now = Date.now();
    const lines = ['gh-1', 'gh-2'].flatMap((group) =>
      Array.from({ length: 60 }, (_, day) =>
        JSON.stringify({
          group,
          topic: 'esp/air/temperature',
          value: day,
          time: new Date(now - day * 86_400_000 - 3_600_000).toISOString(),
        }),
      ),
    );
    const file = join(dataDir, '..', `old-${Date.now()}.ndjson`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    expect((await hortus(undefined, ['readings', 'import', file], { env })).code).to.equal(0);
    expect((await hortus(undefined, ['group', 'create', 'gh-2'], { env })).code).to.equal(0);
    const override = await hortus(undefined, ['group', 'retention', 'gh-2', '10'], { env });
    expect(override.stdout).to.match(/Retention: +10 days/u);

    const signals = new EventEmitter();
    const stdout = new Capture();
    const served = hortus(undefined, ['serve', '--port', '0'], { env, signals, stdout });
    let purge: LogLine | undefined;
    // Up to 20 s: serve starts and purges at once, but a machine running two test runs is slow to start it.
    for (let attempt = 0; attempt < 400 && purge === undefined; attempt += 1) {
      await sleep(50);
      purge = stdout.text
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LogLine)
        .find((line) => line.event === 'retention purge');
    }
    signals.emit('SIGTERM');
    expect((await served).code).to.equal(0);

    expect(purge).to.deep.include({ deleted: 30 + 50, groups: { 'gh-1': 30, 'gh-2': 50 }, summaries: 0 });
    const latest = await hortus(undefined, ['readings', 'latest', '--group', 'gh-2', '--json'], { env });
    expect(JSON.parse(latest.stdout)).to.have.length(1);
    const bad = await hortus(undefined, ['group', 'retention', 'gh-2', '-3'], { env });
    expect(bad.code).to.equal(2);
  });
});
