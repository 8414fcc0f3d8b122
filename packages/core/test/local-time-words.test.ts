import {
  DEFAULT_TIME_ZONE,
  defaultBoxSettings,
  defaultCoreSettings,
  formatLocalTime,
  withUnit,
} from '@hortus/core';
import { expect } from './support.js';

describe('times and values in words', () => {
  it('when an instant is formatted for a zone, then it reads as that wall clock with the zone named', () => {
    const instant = new Date('2026-11-29T13:05:03.400Z');
    expect(formatLocalTime(instant, 'Europe/Berlin')).to.equal('2026-11-29 14:05:03 CET');
    expect(formatLocalTime(instant, 'America/New_York')).to.equal('2026-11-29 08:05:03 EST');
    expect(formatLocalTime(instant, 'UTC')).to.equal('2026-11-29 13:05:03 UTC');
  });

  it('when a zone has no name in letters, then its offset is shown', () => {
    expect(formatLocalTime(new Date('2026-11-29T13:05:03Z'), 'Asia/Kolkata')).to.equal(
      '2026-11-29 18:35:03 +05:30',
    );
  });

  it('when the clocks go back, then the two identical wall-clock times are told apart by their zone', () => {
    // Europe/Berlin, 25 October 2026: 03:00 CEST becomes 02:00 CET, so 02:30 happens twice.
    expect(formatLocalTime(new Date('2026-10-25T00:30:00Z'), 'Europe/Berlin')).to.equal(
      '2026-10-25 02:30:00 CEST',
    );
    expect(formatLocalTime(new Date('2026-10-25T01:30:00Z'), 'Europe/Berlin')).to.equal(
      '2026-10-25 02:30:00 CET',
    );
    // America/New_York, 8 March 2026: 02:00 EST jumps to 03:00 EDT.
    expect(formatLocalTime(new Date('2026-03-08T06:59:59Z'), 'America/New_York')).to.equal(
      '2026-03-08 01:59:59 EST',
    );
    expect(formatLocalTime(new Date('2026-03-08T07:00:00Z'), 'America/New_York')).to.equal(
      '2026-03-08 03:00:00 EDT',
    );
  });

  it('when a value of a known topic is put in words, then its unit follows (a derived value rounded to two decimals, a reading as sent); an unknown topic or a raw count shows the number', () => {
    expect(withUnit(91, 'esp/air/humidity')).to.equal('91 %');
    expect(withUnit(23.5, 'esp/air/temperature')).to.equal('23.5 °C');
    expect(withUnit(2.5512861342, 'esp/derived/vpd')).to.equal('2.55 kPa');
    expect(withUnit(18.7249, 'esp/air/temperature')).to.equal('18.7249 °C');
    expect(withUnit(1013, 'esp/air/pressure')).to.equal('1013 hPa');
    expect(withUnit(1.2, 'esp/derived/vpd')).to.equal('1.2 kPa');
    expect(withUnit(14, 'esp/derived/dli')).to.equal('14 mol m⁻² d⁻¹');
    expect(withUnit(420, 'esp/ground/light/red')).to.equal('420');
    expect(withUnit(1750, 'esp/air/co2')).to.equal('1750');
    expect(withUnit(5, undefined)).to.equal('5');
  });

  it('when nothing is configured, then time rules, "today" and box stamps all read Europe/Berlin', () => {
    expect(DEFAULT_TIME_ZONE).to.equal('Europe/Berlin');
    expect(defaultCoreSettings.timeZone).to.equal(DEFAULT_TIME_ZONE);
    expect(defaultBoxSettings.timeZone).to.equal(DEFAULT_TIME_ZONE);
  });
});
