import { boxGroupName } from '@hortus/core';
import { expect, type TestServer, testStore } from './harness.js';
import {
  HTTP_CLIENT_HEADERS,
  latestOf,
  onboarded,
  pastedFind,
  pastedInsertOne,
  startHttpsTestServer,
} from './box-requests.js';

describe(`Boxes of firmware 1.0.4 in a group whose name holds ", \\ or a tab (${testStore} store)`, () => {
  let api: TestServer;
  before(async () => {
    api = await startHttpsTestServer();
  });
  after(async () => {
    await api.close();
  });

  it('when the box pastes the name onboarding told it into its readings, then they are stored under the real group, and find and the update check answer as for any group', async () => {
    const group = `${api.unique('Nord')} "A" \\ 2\tbeet`;
    await api.seed.group(group);
    await api.seed.device('24:6F:28:AA:EE:01', group);
    await api.seed.action(group, 'pump_1', 'on');

    const box = await onboarded(api, '1eeaa286f24');
    // The name as it is would make the firmware's pasted body invalid JSON: the premise of the fix.
    const asItIs = await pastedInsertOne(
      api,
      box,
      'esp/air/humidity',
      '55.00',
      '2025-06-15T14:29:00.000Z',
      group,
    );
    const reading = await pastedInsertOne(
      api,
      box,
      'esp/air/temperature',
      '21.37',
      '2025-06-15T14:29:40.000Z',
    );
    const actions = await pastedFind(api, box);
    const update = await api.call('GET', '/api/hardware/update', { headers: { ...HTTP_CLIENT_HEADERS } });

    expect(box.group).to.equal(boxGroupName(group));
    expect(box.group).to.match(/^Nord.* _A_ _ 2_beet$/u);
    expect(asItIs.status, asItIs.text).to.equal(400);
    expect(reading.status, reading.text).to.equal(201);
    expect(
      (await latestOf(api, group)).map(({ topic, value, time, group: of }) => ({ topic, value, time, of })),
    ).to.deep.equal([
      { topic: 'esp/air/temperature', value: 21.37, time: '2025-06-15T12:29:40.000Z', of: group },
    ]);
    expect(await latestOf(api, box.group)).to.deep.equal([]);
    expect(actions.status, actions.text).to.equal(200);
    const { documents } = actions.json() as { documents: { group: string; object: string; value: string }[] };
    expect(documents.find((document) => document.object === 'pump_1')).to.deep.include({
      group,
      value: 'on',
    });
    expect(documents.every((document) => document.group === group)).to.equal(true);
    // The update check names no box and no group: a group's name cannot change its answer.
    expect(update.status, update.text).to.equal(204);
  });
});
