import { type EngineStateRepository } from '@hortus/core';
import { at, expect, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

export function engineStateRepositoryContract(name: string, createStore: StoreFactory<'engineState'>): void {
  describe(`${name}: EngineStateRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): EngineStateRepository => store().engineState;

    it('when a key was never written, then get answers undefined', async () => {
      expect(await repository().get('slot\u0000gh\u0000pump_1')).to.equal(undefined);
    });

    it('when a key is claimed at version 0, then it holds version 1 with the value and time', async () => {
      expect(
        await repository().compareAndSet('k', 0, { firedAt: 5, note: 'x', ok: true, none: null }, at(0)),
      ).to.equal(true);
      const stored = await repository().get('k');
      expect(stored?.version).to.equal(1);
      expect(stored?.value).to.deep.equal({ firedAt: 5, note: 'x', ok: true, none: null });
      expect(stored?.updatedAt.getTime()).to.equal(at(0).getTime());
    });

    it('when the expected version is stale, then nothing changes and it answers false', async () => {
      await repository().compareAndSet('k', 0, { side: 'within' }, at(0));
      expect(await repository().compareAndSet('k', 0, { side: 'beyond' }, at(MINUTE))).to.equal(false);
      expect(await repository().compareAndSet('k', 2, { side: 'beyond' }, at(MINUTE))).to.equal(false);
      expect((await repository().get('k'))?.value).to.deep.equal({ side: 'within' });
      expect(await repository().compareAndSet('k', 1, { side: 'beyond' }, at(MINUTE))).to.equal(true);
      expect(await repository().get('k')).to.deep.include({ version: 2, value: { side: 'beyond' } });
    });

    it('when ten callers race to claim one key, then exactly one wins', async () => {
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => repository().compareAndSet('slot', 0, { owner: i }, at(0))),
      );
      expect(outcomes.filter(Boolean)).to.have.lengthOf(1);
    });

    it('when ten callers race to advance one version, then exactly one wins', async () => {
      await repository().compareAndSet('rule', 0, { side: 'within' }, at(0));
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, () =>
          repository().compareAndSet('rule', 1, { side: 'beyond' }, at(MINUTE)),
        ),
      );
      expect(outcomes.filter(Boolean)).to.have.lengthOf(1);
      expect((await repository().get('rule'))?.version).to.equal(2);
    });

    it('when old entries are purged, then only those written before the cut-off go', async () => {
      await repository().compareAndSet('old', 0, { n: 1 }, at(0));
      await repository().compareAndSet('new', 0, { n: 2 }, at(10 * MINUTE));
      expect(await repository().purgeBefore(at(5 * MINUTE))).to.equal(1);
      expect(await repository().get('old')).to.equal(undefined);
      expect(await repository().get('new')).not.to.equal(undefined);
    });

    it('when a key is advanced many times, then one entry is kept: a purge counts it once', async () => {
      for (let version = 0; version < 7; version += 1) {
        expect(await repository().compareAndSet('checkpoint', version, { n: version }, at(0))).to.equal(true);
      }
      expect(await repository().get('checkpoint')).to.deep.include({ version: 7, value: { n: 6 } });
      expect(await repository().purgeBefore(at(MINUTE))).to.equal(1);
    });

    it('when a returned state is mutated, then the stored state is unchanged', async () => {
      await repository().compareAndSet('k', 0, { n: 1 }, at(0));
      const first = await repository().get('k');
      (first?.value as Record<string, unknown>)['n'] = 99;
      expect((await repository().get('k'))?.value).to.deep.equal({ n: 1 });
    });
  });
}
