import { expect } from 'chai';
import { readingItemsFromMqtt } from '@hortus/mqtt';

describe('readingItemsFromMqtt', () => {
  it('when the legacy text `<value>,<group>` arrives, then it is one reading of the message topic', () => {
    expect(readingItemsFromMqtt('esp/air/temperature', ' 23.5, greenhouse ')).to.deep.equal([
      { topic: 'esp/air/temperature', value: '23.5', group: 'greenhouse' },
    ]);
  });

  it('when JSON without a topic arrives, then each item takes the message topic; the compact form names its own', () => {
    expect(
      readingItemsFromMqtt('esp/a', '[{"group":"g","value":1},{"group":"g","value":2,"topic":"x"}]'),
    ).to.deep.equal([
      { group: 'g', value: 1, topic: 'esp/a' },
      { group: 'g', value: 2, topic: 'x' },
    ]);
    expect(readingItemsFromMqtt('esp/box', '{"group":"g","values":{"esp/l":3,"esp/h":4}}')).to.deep.equal([
      { group: 'g', topic: 'esp/l', value: 3 },
      { group: 'g', topic: 'esp/h', value: 4 },
    ]);
  });

  it('when the payload is neither format, then it answers undefined', () => {
    for (const payload of ['garbage', ',greenhouse', '{"group": ', '']) {
      expect(readingItemsFromMqtt('esp/a', payload), payload).to.equal(undefined);
    }
  });
});
