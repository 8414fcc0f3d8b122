import {
  DERIVE_CLOSE_AFTER_MS,
  DeriveMetrics,
  defaultCoreSettings,
  dewPoint,
  type Group,
  leafVpd,
  type NewReading,
  type Reading,
} from '@hortus/core';
import { at, expect, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

const T = 'esp/air/temperature';
const RH = 'esp/air/humidity';
const LUX = 'esp/ground/light/lux';

function groupWith(name: string, metrics: Record<string, unknown>): Group {
  return { id: name, name, package: 'small', employee: [], settings: [{ metrics }] };
}

const round = (value: number, decimals: number): number =>
  Math.round(value * 10 ** decimals) / 10 ** decimals;

/**
 * The derivation of the derived series (core's DeriveMetrics) on each store: it reads readings and claims
 * windows in the engine state, so each store must answer it the same way.
 */
export function derivedMetricsContract(
  name: string,
  createStore: StoreFactory<'readings' | 'engineState'>,
): void {
  describe(`${name}: derived series (DeriveMetrics on the readings and engine state)`, () => {
    const store = freshStorePerTest(createStore);
    const engine = () =>
      new DeriveMetrics(store().readings, store().engineState, { ...defaultCoreSettings, timeZone: 'UTC' });
    const group = groupWith('derived-gh', {
      vpd: true,
      dewPoint: true,
      dli: true,
      leafOffset: -2,
      light: 0.02,
    });
    const reading = (topic: string, offsetMs: number, value: number): NewReading => ({
      group: group.name,
      topic,
      time: at(offsetMs),
      value,
    });
    // Two box rounds a minute apart; the second's humidity comes 30 s after its temperature.
    const air = [
      reading(T, 0, 20),
      reading(RH, 1000, 60),
      reading(T, MINUTE, 24.5),
      reading(RH, MINUTE + 30_000, 55),
    ];
    const light = [reading(LUX, 0, 10_000), reading(LUX, MINUTE, 20_000), reading(LUX, 2 * MINUTE, 20_000)];
    const after = (offsetMs: number) => at(offsetMs + DERIVE_CLOSE_AFTER_MS + MINUTE);
    const series = async (topic: string): Promise<Reading[]> =>
      (await store().readings.newestFirst({ group: group.name, topic }, 100)).reverse();
    const values = async (topic: string) =>
      (await series(topic)).map((r) => [r.time.getTime() - at(0).getTime(), r.value]);

    /** The engine's first look claims only the last closed window; the cursor starts before the readings. */
    async function startCursorAt(offsetMs: number): Promise<void> {
      await store().engineState.compareAndSet(
        JSON.stringify(['derived', group.name]),
        0,
        { through: at(offsetMs).getTime() },
        at(0),
      );
    }

    it('when windows with temperature, humidity and lux close, then VPD, dew point, PPFD and DLI are stored at the later stamps', async () => {
      await store().readings.add([...air, ...light]);
      await startCursorAt(0);
      const stored = await engine().deriveGroup(group, after(2 * MINUTE));
      expect(await values('esp/derived/vpd')).to.deep.equal([
        [1000, round(leafVpd(20, 60, -2), 3)],
        [MINUTE + 30_000, round(leafVpd(24.5, 55, -2), 3)],
      ]);
      expect(await values('esp/derived/dew_point')).to.deep.equal([
        [1000, round(dewPoint(20, 60) ?? 0, 2)],
        [MINUTE + 30_000, round(dewPoint(24.5, 55) ?? 0, 2)],
      ]);
      expect(await values('esp/derived/ppfd')).to.deep.equal([
        [0, 200],
        [MINUTE, 400],
        [2 * MINUTE, 400],
      ]);
      // 200 → 400 over 60 s, then 400 over 60 s: 18 000 + 24 000 µmol m⁻² in the day so far.
      expect(await values('esp/derived/dli')).to.deep.equal([
        [0, 0],
        [MINUTE, 0.018],
        [2 * MINUTE, 0.042],
      ]);
      expect(stored).to.equal(10);
    });

    it('when readings arrive out of order and twice, then the series is the same as in order', async () => {
      const shuffled = [air[3], light[2], air[1], light[0], air[0], air[2], light[1]].filter(
        (r) => r !== undefined,
      );
      for (const batch of [shuffled.slice(0, 3), shuffled.slice(3), shuffled, [air[1], light[1]]])
        await store().readings.add(batch.filter((r) => r !== undefined));
      await startCursorAt(0);
      await engine().deriveGroup(group, after(2 * MINUTE));
      expect((await values('esp/derived/vpd')).map(([time]) => time)).to.deep.equal([1000, MINUTE + 30_000]);
      expect(await values('esp/derived/dli')).to.deep.equal([
        [0, 0],
        [MINUTE, 0.018],
        [2 * MINUTE, 0.042],
      ]);
    });

    it('when two engines on the store derive at once, then one claims the windows and each value is stored once', async () => {
      await store().readings.add([...air, ...light]);
      await startCursorAt(0);
      const now = after(2 * MINUTE);
      const outcomes = await Promise.all([
        engine().deriveGroup(group, now),
        engine().deriveGroup(group, now),
      ]);
      expect(outcomes.filter((count) => count > 0)).to.have.lengthOf(1);
      expect(await series('esp/derived/vpd')).to.have.lengthOf(2);
      expect(await series('esp/derived/ppfd')).to.have.lengthOf(3);
      // A later look at the same time finds nothing left to claim.
      expect(await engine().deriveGroup(group, now)).to.equal(0);
    });

    it('when a window has not closed yet, then it is left for a later look', async () => {
      await store().readings.add([...air]);
      await startCursorAt(0);
      await engine().deriveGroup(group, at(MINUTE + DERIVE_CLOSE_AFTER_MS));
      expect((await values('esp/derived/vpd')).map(([time]) => time)).to.deep.equal([1000]);
      await engine().deriveGroup(group, after(MINUTE));
      expect((await values('esp/derived/vpd')).map(([time]) => time)).to.deep.equal([1000, MINUTE + 30_000]);
    });

    it('when the metrics are off, then nothing is derived and nothing claimed', async () => {
      await store().readings.add([...air, ...light]);
      const off = groupWith(group.name, { vpd: false });
      expect(await engine().deriveGroup(off, after(2 * MINUTE))).to.equal(0);
      expect(await series('esp/derived/vpd')).to.have.lengthOf(0);
      expect(await store().engineState.get(JSON.stringify(['derived', group.name]))).to.equal(undefined);
    });

    it('when the past is backfilled, then it is derived up to the engine cursor with progress, and a second backfill stores nothing new', async () => {
      await store().readings.add([...air, ...light]);
      const engineNow = after(30 * 60 * MINUTE);
      // The engine started after the readings: its first claim covers only its last window.
      expect(await engine().deriveGroup(group, engineNow)).to.equal(0);
      const progress: number[] = [];
      const result = await engine().backfill(group, engineNow, (step) =>
        progress.push(step.doneMs / step.totalMs),
      );
      expect(result.stored).to.equal(10);
      expect(result.from?.getTime()).to.equal(at(0).getTime());
      expect(progress.at(-1)).to.equal(1);
      expect(await values('esp/derived/dli')).to.deep.equal([
        [0, 0],
        [MINUTE, 0.018],
        [2 * MINUTE, 0.042],
      ]);
      expect((await engine().backfill(group, engineNow)).stored).to.equal(0);
    });

    it('when backfill is asked with every series off, then it is refused', async () => {
      await expect(engine().backfill(groupWith(group.name, {}), at(0))).to.be.rejectedWith(
        /no derived series/u,
      );
    });
  });
}
