import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { type ActionRepository, type Device, FindBoxActions } from '@hortus/core';
import { createMemoryStore } from '@hortus/adapter-memory';

chai.use(chaiAsPromised);
const { expect } = chai;

const box: Device = { id: 'd1', deviceId: '100aa286f24', group: 'gh', type: 'box' };

describe("a box's find answer: relays of missing actions", () => {
  it('when the group lacks some relay objects, then each is answered off, after the stored ones, and a filter still narrows them', async () => {
    const store = createMemoryStore();
    await store.actions.create({ group: 'gh', object: 'led_1', value: 'on', automations: [] });
    const find = new FindBoxActions(store.actions);
    const answer = await find.execute(box, undefined);
    expect(answer.map(({ object, value }) => `${object} ${value}`)).to.deep.equal([
      'led_1 on',
      'pump_1 off',
      'ventilator_1 off',
      'ventilator_2 off',
    ]);
    const narrowed = await find.execute(box, { object: 'pump_1' });
    expect(narrowed.map(({ object, value }) => `${object} ${value}`)).to.deep.equal(['pump_1 off']);
  });

  it('when the store does not answer, then find fails rather than answering any relay off', async () => {
    const store = createMemoryStore();
    // The memory store with its one read that find makes failing, as a store outage would.
    const outage: ActionRepository = Object.assign(Object.create(store.actions) as ActionRepository, {
      listByGroup: () => Promise.reject(new Error('store unavailable')),
    });
    await expect(new FindBoxActions(outage).execute(box, undefined)).to.be.rejectedWith('store unavailable');
  });
});
