import { expect } from 'chai';
import { type Logger } from '@hortus/core';
import { WarningGate } from '../src/warning-gate.js';

describe('WarningGate', () => {
  function setUp(): { gate: WarningGate; lines: unknown[][]; clock: { now: number } } {
    const lines: unknown[][] = [];
    const log =
      (level: string) =>
      (event: string, fields: Readonly<Record<string, unknown>> = {}): void => {
        lines.push([level, event, fields]);
      };
    const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
    const clock = { now: 0 };
    return { gate: new WarningGate(logger, 60_000, () => clock.now), lines, clock };
  }

  it('when one event repeats within the interval, then one line is written; the next after it tells how many were held back', () => {
    const { gate, lines, clock } = setUp();
    for (let i = 0; i < 20_000; i += 1) gate.warn('mqtt.message_malformed', { n: i });
    clock.now = 60_000;
    gate.warn('mqtt.message_malformed', { n: 'later' });
    clock.now = 120_000;
    gate.warn('mqtt.message_malformed', { n: 'quiet' });

    expect(lines).to.deep.equal([
      ['warn', 'mqtt.message_malformed', { n: 0 }],
      ['warn', 'mqtt.message_malformed', { n: 'later', suppressed: 19_999 }],
      ['warn', 'mqtt.message_malformed', { n: 'quiet' }],
    ]);
  });

  it('when different events arrive, then each has its own interval and level', () => {
    const { gate, lines } = setUp();
    gate.warn('a', {});
    gate.warn('b', {}, 'error');
    gate.warn('a', {});

    expect(lines).to.deep.equal([
      ['warn', 'a', {}],
      ['error', 'b', {}],
    ]);
  });
});
