import { type ChangeFeed, type NewReading } from '@hortus/core';
import { at, expect, freshStorePerTest, type StoreFactory } from './store.js';

type Subject = 'changeFeed' | 'readings' | 'actions' | 'groups' | 'notifications';

function reading(group: string): NewReading {
  return { group, topic: 'esp/air/temperature', value: 20, time: at(0) };
}

/** The cursor after everything written so far has been reported (a store may report a change twice). */
async function caughtUp(feed: ChangeFeed): Promise<string> {
  let { cursor } = await feed.changesSince(undefined);
  for (let round = 0; round < 3; round += 1) {
    const answer = await feed.changesSince(cursor);
    cursor = answer.cursor;
    if (answer.groups.length === 0) return cursor;
  }
  throw new Error('The feed kept naming groups though nothing was written');
}

export function changeFeedContract(name: string, createStore: StoreFactory<Subject>): void {
  describe(`${name}: change feed contract`, () => {
    const store = freshStorePerTest(createStore);
    const feed = (): ChangeFeed => store().changeFeed;

    it('when asked without a cursor, then it answers a reset and a cursor, and names no group', async () => {
      const answer = await feed().changesSince(undefined);

      expect(answer.reset).to.equal(true);
      expect(answer.groups).to.deep.equal([]);
      expect(answer.cursor).to.be.a('string');
    });

    it('when a cursor it never gave is handed in, then it answers a reset rather than guessing', async () => {
      const answer = await feed().changesSince('not a cursor of this store');

      expect(answer.reset).to.equal(true);
      expect(answer.groups).to.deep.equal([]);
    });

    it('when nothing was written since the cursor of a fresh store, then no group is named', async () => {
      const { cursor } = await feed().changesSince(undefined);

      const answer = await feed().changesSince(cursor);

      expect(answer.reset).to.equal(false);
      expect(answer.groups).to.deep.equal([]);
    });

    it('when a reading of a group is stored, then that group is named and no other', async () => {
      await store().readings.add([reading('quiet')]);
      const cursor = await caughtUp(feed());

      await store().readings.add([reading('gh-1')]);

      const answer = await feed().changesSince(cursor);
      expect(answer.reset).to.equal(false);
      expect(answer.groups).to.deep.equal(['gh-1']);
    });

    it('when an action, a group record or a notification changes, then its group is named', async () => {
      const cursor = await caughtUp(feed());

      await store().actions.create({ group: 'by-action', object: 'pump', value: 'off', automations: [] });
      await store().groups.create({ name: 'by-group', package: 'small', employee: [], settings: [] });
      await store().notifications.create({ group: 'by-notification', time: at(0), message: 'hi' });

      const answer = await feed().changesSince(cursor);
      expect([...answer.groups].sort()).to.deep.equal(['by-action', 'by-group', 'by-notification']);
    });

    it('when a group was named, then the next answer does not name it again unless it changes again', async () => {
      const start = await caughtUp(feed());
      await store().readings.add([reading('gh-1')]);
      const first = await feed().changesSince(start);

      const second = await feed().changesSince(first.cursor);
      await store().groups.create({ name: 'gh-1', package: 'small', employee: [], settings: [] });
      const third = await feed().changesSince(second.cursor);

      expect(first.groups).to.deep.equal(['gh-1']);
      expect(second.groups).to.deep.equal([]);
      expect(third.groups).to.deep.equal(['gh-1']);
    });

    it('when a group is deleted, then it is named, so a reader notices it is gone', async () => {
      await store().groups.create({ name: 'gone', package: 'small', employee: [], settings: [] });
      const cursor = await caughtUp(feed());

      await store().groups.delete('gone');

      expect((await feed().changesSince(cursor)).groups).to.deep.equal(['gone']);
    });
  });
}
