import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually, expect } from './harness.js';
import { cliMain, describeOncePerRun, type ServedProcess, spawnServe } from './served-process.js';

/*
 * Issue 34, item 7, end to end: a server killed without warning (SIGKILL: power cut, OOM killer) comes back
 * on the same SQLite file with every acknowledged reading, and its engine reconciles with what happened while
 * it was down, never re-asserting a switch the rules no longer want. The seeded harness in core proves the
 * same invariants on a simulated clock; this proves them on the real process, store and scheduler.
 */

const run = promisify(execFile);

interface Switched {
  readonly group: string;
  readonly object: string;
  readonly value: string;
  readonly previousValue: string;
  readonly trigger: string;
  readonly rule?: string;
}

/** Every switch the spawned server logged, in order. */
function switchesIn(served: ServedProcess): Switched[] {
  return served
    .output()
    .split('\n')
    .filter((line) => line.includes('"event":"automation tick"'))
    .flatMap((line) => (JSON.parse(line) as { switched: Switched[] }).switched);
}

async function valueOf(served: ServedProcess, group: string, object: string): Promise<string | undefined> {
  const reply = await fetch(`${served.url}/api/actions/current_state?group=${group}`);
  const { message } = (await reply.json()) as { message: { object: string; value: string }[] };
  return message.find((action) => action.object === object)?.value;
}

describeOncePerRun('hortus serve killed with SIGKILL and started again on its SQLite file', function () {
  this.timeout(120_000);
  const group = 'greenhouse-kill';
  let dataDir: string;
  let env: Record<string, string>;
  const started: ServedProcess[] = [];

  /** A data command on the same file, as an operator runs it while the server is down. */
  const hortus = (...args: string[]) =>
    run(process.execPath, [cliMain, ...args], { env: { ...process.env, ...env }, timeout: 60_000 });

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'hortus-kill-'));
    env = {
      STORE: 'sqlite',
      HORTUS_DATA_DIR: dataDir,
      AUTOMATIONS: 'on',
      AUTOMATION_TICK_MS: '100',
      LOG_FORMAT: 'json',
    };
  });

  afterEach(async () => {
    for (const served of started.splice(0)) {
      if (served.child.exitCode === null && served.child.signalCode === null) await served.stop('SIGKILL');
    }
  });

  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('when killed with a heater on and acknowledged readings, then after the restart every acknowledged reading is there and the heater follows what arrived while it was down', async () => {
    await hortus('group', 'create', group);
    await hortus('action', 'create', 'heater_1', '--group', group);
    const rules = [
      {
        timeAutomations: [],
        sensorAutomations: [{ action: 'on', sensor: 'temperature', condition: 'below', value: '18' }],
      },
      {
        timeAutomations: [],
        sensorAutomations: [{ action: 'off', sensor: 'temperature', condition: 'above', value: '22' }],
      },
    ];
    await hortus('action', 'automations', 'heater_1', '--group', group, '--replace', JSON.stringify(rules));

    // The last 20 minutes were cold, and the heater is on (by hand: a sensor rule's own switch would hold
    // the next one back for the 60 s switch interval, and a start without fresh readings is safe mode's).
    const now = Date.now();
    const reading = (minutesAgo: number, value: number) => ({
      group,
      topic: 'esp/air/temperature',
      value,
      time: new Date(now - minutesAgo * 60_000).toISOString(),
    });
    const history = join(dataDir, 'history.ndjson');
    writeFileSync(
      history,
      Array.from({ length: 19 }, (_, index) => `${JSON.stringify(reading(20 - index, 15))}\n`).join(''),
    );
    await hortus('readings', 'import', history);
    await hortus('action', 'set', 'heater_1', 'on', '--group', group);

    const first = await spawnServe(env);
    started.push(first);
    const acknowledged: string[] = [];
    for (const minutesAgo of [1, 0.5, 0]) {
      const posted = reading(minutesAgo, 15);
      const reply = await fetch(`${first.url}/api/data/readings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(posted),
      });
      expect(reply.status, await reply.text()).to.equal(202);
      acknowledged.push(posted.time);
    }
    expect(await valueOf(first, group, 'heater_1')).to.equal('on');

    const killed = await first.stop('SIGKILL');
    expect(killed.signal).to.equal('SIGKILL');
    // Cold readings with the heater on: nothing for the first server's engine to switch (no safe mode either).
    expect(switchesIn(first)).to.deep.equal([]);

    // While it is down the greenhouse warms up: a reading arrives by import (as a box's backlog would).
    const warm = join(dataDir, 'warm.ndjson');
    writeFileSync(warm, `${JSON.stringify({ ...reading(0, 25), time: new Date().toISOString() })}\n`);
    await hortus('readings', 'import', warm);

    const second = await spawnServe(env);
    started.push(second);
    await eventually(async () => expect(await valueOf(second, group, 'heater_1')).to.equal('off'), 30_000);
    // The restarted engine's only switch of the heater is the one the newest reading asks for (its tick's
    // log line is written once the whole tick is done, which may be after the switch shows).
    await eventually(() =>
      expect(switchesIn(second).filter((entry) => entry.object === 'heater_1')).to.deep.equal([
        {
          group,
          object: 'heater_1',
          value: 'off',
          previousValue: 'on',
          trigger: 'sensor',
          rule: 'temperature above 22 -> off',
        },
      ]),
    );

    const exported = join(dataDir, 'after.ndjson');
    await hortus('readings', 'export', '--group', group, '--output', exported);
    const stored = readFileSync(exported, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => (JSON.parse(line) as { time: string; value: number }).time);
    for (const time of acknowledged) expect(stored, `acknowledged reading at ${time}`).to.include(time);
  });
});
