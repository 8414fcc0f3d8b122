import { InvalidInputError, parseDateBound, parseDateTime, requireDate } from '@hortus/core';
import { expect } from './support.js';

describe('strict dates', () => {
  it('when a date-time has Z or an offset, then it is read as that instant, fractions to the millisecond', () => {
    const cases: [string, string][] = [
      ['2025-06-15T10:00:00Z', '2025-06-15T10:00:00.000Z'],
      ['2025-06-15t10:00:00.123456z', '2025-06-15T10:00:00.123Z'],
      ['2025-06-15T12:00+02:00', '2025-06-15T10:00:00.000Z'],
      ['2025-06-15T05:30:00-04:30', '2025-06-15T10:00:00.000Z'],
      ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
      ['0099-01-01T00:00:00Z', '0099-01-01T00:00:00.000Z'],
    ];
    for (const [text, iso] of cases) expect(parseDateTime(text)?.toISOString(), text).to.equal(iso);
  });

  it('when a text is not a calendar-valid RFC 3339 date-time with an offset, then it is refused, never guessed', () => {
    const refused = [
      '2025-02-30T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2025-13-01T00:00:00Z',
      '2025-06-15T24:00:00Z',
      '2025-06-15T10:60:00Z',
      '2025-06-15T10:00:60Z',
      '2025-06-15T10:00:00+24:00',
      '2025-06-15T10:00:00',
      '2025-06-15 10:00:00Z',
      '2025-06-15',
      '1',
      'March 7 2025',
      '2025-06-15T10:00:00+0200',
      '',
    ];
    for (const text of refused) expect(parseDateTime(text), text).to.equal(undefined);
  });

  it('when a range bound is a date alone, then it must exist and covers the whole day; 2025-02-30 is refused', () => {
    expect(parseDateBound('2025-06-15', 'start')?.toISOString()).to.equal('2025-06-15T00:00:00.000Z');
    expect(parseDateBound('2025-06-15', 'end')?.toISOString()).to.equal('2025-06-15T23:59:59.999Z');
    expect(parseDateBound('2025-06-15T10:00:00Z', 'end')?.toISOString()).to.equal('2025-06-15T10:00:00.000Z');
    for (const text of ['2025-02-30', '1', 'March 7 2025', '2025-6-1']) {
      expect(parseDateBound(text, 'start'), text).to.equal(undefined);
    }
  });

  it('when a time is a number or a lenient text, then requireDate throws InvalidInputError naming the field', () => {
    for (const value of [1, '1', 'March 7 2025', '2025-02-30T00:00:00Z', null]) {
      expect(() => requireDate(value, 'time'), String(value))
        .to.throw(InvalidInputError)
        .with.property('message')
        .that.matches(/^time must be an RFC 3339 date-time/u);
    }
  });
});
