import { Temporal } from 'temporal-polyfill';
import {
  dueSlot,
  fromLocal,
  instantOfWallClock,
  localDayBounds,
  localHoursSoFar,
  toLocal,
} from '@hortus/core';
import { expect } from './support.js';

const grace = 5 * 60_000;
const from = Temporal.Instant.from('1990-01-01T00:00:00Z');
const until = Temporal.Instant.from('2040-01-01T00:00:00Z');

/** mulberry32: a seeded generator, so a failing random day can be replayed. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The wall clock as ICU shows it, read independently of Temporal. */
function wallClock(timeZone: string): (ms: number) => string {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  });
  // "2026-03-08, 03:30" read back as "2026-03-08T03:30"
  return (ms) => format.format(ms).replace(', ', 'T');
}

/** Each zone's transition days (the local days on both sides of each) and a few seeded random days. */
function daysToCheck(timeZone: string, random: () => number): Temporal.PlainDate[] {
  const days = new Map<string, Temporal.PlainDate>();
  const add = (instant: Temporal.Instant): void => {
    const day = instant.toZonedDateTimeISO(timeZone).toPlainDate();
    days.set(day.toString(), day);
  };
  let at: Temporal.ZonedDateTime | null = from.toZonedDateTimeISO(timeZone);
  while (
    (at = at.getTimeZoneTransition('next')) !== null &&
    Temporal.Instant.compare(at.toInstant(), until) < 0
  ) {
    add(at.toInstant());
    add(at.toInstant().subtract({ nanoseconds: 1 }));
  }
  const span = until.epochMilliseconds - from.epochMilliseconds;
  for (let i = 0; i < 3; i += 1)
    add(Temporal.Instant.fromEpochMilliseconds(from.epochMilliseconds + Math.floor(random() * span)));
  return [...days.values()];
}

/** The wall times of a day worth trying: the minutes around each transition, midnight, noon, 23:59. */
function timesToCheck(day: Temporal.PlainDate, timeZone: string): string[] {
  const times = new Set(['00:00', '12:00', '23:59']);
  const start = day.toZonedDateTime(timeZone);
  let next = start.getTimeZoneTransition('next');
  const end = start.add({ days: 1 });
  while (next !== null && Temporal.ZonedDateTime.compare(next, end) < 0) {
    const before = next.subtract({ nanoseconds: 1 }).toPlainTime();
    const after = next.toPlainTime();
    const middle = before.add({ minutes: Math.round(Math.abs(after.since(before).total('minutes')) / 2) });
    for (const time of [before, after, middle, after.add({ minutes: 1 })])
      times.add(time.toString().slice(0, 5));
    next = next.getTimeZoneTransition('next');
  }
  return [...times];
}

describe('time zones against Temporal, every IANA zone, 1990-2040', function () {
  this.timeout(300_000);

  it('when a time rule or a /tem day meets any transition of any zone, then slots and day bounds are Temporal’s', () => {
    const random = seeded(17);
    // Mismatches are collected and compared once: an assertion per probe costs more than the probe.
    const problems: string[] = [];
    const check = (ok: boolean, what: string): void => {
      if (!ok && problems.length < 20) problems.push(what);
    };
    let checked = 0;
    for (const timeZone of Intl.supportedValuesOf('timeZone')) {
      const wall = wallClock(timeZone);
      for (const day of daysToCheck(timeZone, random)) {
        const date = day.toString();
        const label = `${timeZone} ${date}`;
        const start = day.toZonedDateTime(timeZone).epochMilliseconds;
        const end = day.add({ days: 1 }).toZonedDateTime(timeZone).epochMilliseconds;
        // Day bounds: Temporal's start of day, and ICU agrees it is the first instant of that local day.
        for (const probe of [start, Math.floor((start + end) / 2), end - 1]) {
          const bounds = localDayBounds(new Date(probe), timeZone);
          check(bounds.start.getTime() === start && bounds.end.getTime() === end, `${label}: day bounds`);
        }
        check(wall(start).startsWith(date) && wall(start - 60_000) < date, `${label}: ICU day start`);
        // The hours of /tem cover the day exactly once, each starting at its hour on the wall clock.
        const hours = localHoursSoFar(new Date(end - 1), timeZone);
        check(hours[0]?.start.getTime() === start && hours.at(-1)?.end.getTime() === end, `${label}: hours`);
        hours.forEach((hour, i) => {
          const joined = i === 0 || hour.start.getTime() === hours[i - 1]?.end.getTime();
          check(
            joined && Number(wall(hour.start.getTime()).slice(11, 13)) === hour.hour,
            `${label}: hour ${hour.hour}`,
          );
        });
        for (const time of timesToCheck(day, timeZone)) {
          const [hour = 0, minute = 0] = time.split(':').map(Number);
          const expected = day
            .toPlainDateTime({ hour, minute })
            .toZonedDateTime(timeZone, { disambiguation: 'compatible' }).epochMilliseconds;
          const at = fromLocal({ year: day.year, month: day.month, day: day.day, hour, minute }, timeZone);
          check(at.getTime() === expected, `${label} ${time}: fromLocal`);
          const rule = { action: 'on', time, frequency: 'every day' } as const;
          const slot = dueSlot(rule, new Date(expected + 30_000), timeZone, grace);
          check(slot?.localDate === date && slot.at.getTime() === expected, `${label} ${time}: slot`);
          check(
            dueSlot(rule, new Date(expected - 1), timeZone, grace)?.localDate !== date,
            `${label} ${time}: early`,
          );
          // A time that exists fires when the wall clock shows it; a skipped one fires after the gap.
          check(wall(expected) >= `${date}T${time}`, `${label} ${time}: ICU wall time`);
          checked += 1;
        }
      }
    }
    expect(problems).to.deep.equal([]);
    expect(checked).to.be.greaterThan(10_000);
  });

  it('when 02:30 does not exist in New York, then the rule fires at 03:30 EDT; a repeated 01:30 fires at its first pass', () => {
    const zone = 'America/New_York';
    const spring = dueSlot(
      { action: 'on', time: '02:30', frequency: 'every day' },
      new Date('2026-03-08T07:31:00Z'),
      zone,
      grace,
    );
    expect(spring?.at.toISOString()).to.equal('2026-03-08T07:30:00.000Z');
    expect(toLocal(spring?.at ?? new Date(0), zone)).to.include({ hour: 3, minute: 30 });
    const fall = dueSlot(
      { action: 'on', time: '01:30', frequency: 'every day' },
      new Date('2026-11-01T05:31:00Z'),
      zone,
      grace,
    );
    expect(fall?.at.toISOString()).to.equal('2026-11-01T05:30:00.000Z');
    expect(
      dueSlot(
        { action: 'on', time: '01:30', frequency: 'every day' },
        new Date('2026-11-01T06:31:00Z'),
        zone,
        grace,
      ),
    ).to.equal(undefined);
  });

  it('when midnight is skipped in Santiago, then the /tem day starts at 01:00 and lasts 23 hours', () => {
    const { start, end } = localDayBounds(new Date('2026-09-06T12:00:00Z'), 'America/Santiago');
    expect(start.toISOString()).to.equal('2026-09-06T04:00:00.000Z');
    expect(end.getTime() - start.getTime()).to.equal(23 * 3_600_000);
  });

  it('when box stamps are read again and again around every transition of every zone (2020-2030), then each is the instant Temporal gives, the repeated hour by arrival', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const timeZone of Intl.supportedValuesOf('timeZone')) {
      let at: Temporal.ZonedDateTime | null =
        Temporal.Instant.from('2020-01-01T00:00:00Z').toZonedDateTimeISO(timeZone);
      while ((at = at.getTimeZoneTransition('next')) !== null && at.year < 2030 && problems.length < 20) {
        const before = at.subtract({ nanoseconds: 1 }).toPlainDateTime();
        const after = at.toPlainDateTime();
        // Wall times on both sides of the transition and within the hours next to it, each read twice
        // (the second read may come from what the first learnt about its hour).
        for (const base of [before, after]) {
          for (const minutes of [-90, -61, -60, -30, -1, 0, 1, 30, 59, 60, 61, 90]) {
            const plain = base.add({ minutes }).round({ smallestUnit: 'minute', roundingMode: 'floor' });
            const wall = new Date(plain.toZonedDateTime('UTC').epochMilliseconds);
            const earlier = plain.toZonedDateTime(timeZone, { disambiguation: 'earlier' }).epochMilliseconds;
            const later = plain.toZonedDateTime(timeZone, { disambiguation: 'later' }).epochMilliseconds;
            const repeated = [earlier, later].every((ms) =>
              Temporal.Instant.fromEpochMilliseconds(ms)
                .toZonedDateTimeISO(timeZone)
                .toPlainDateTime()
                .equals(plain),
            );
            const compatible = plain.toZonedDateTime(timeZone, {
              disambiguation: 'compatible',
            }).epochMilliseconds;
            for (const arrival of [earlier, later]) {
              const expected = earlier === later || !repeated ? compatible : arrival;
              for (let read = 0; read < 2; read += 1) {
                const got = instantOfWallClock(wall, timeZone, new Date(arrival)).getTime();
                if (got !== expected && problems.length < 20)
                  problems.push(`${timeZone} ${plain.toString()} read ${read}: ${got} not ${expected}`);
                checked += 1;
              }
            }
          }
        }
      }
    }
    expect(problems).to.deep.equal([]);
    expect(checked).to.be.greaterThan(10_000);
  });
});
