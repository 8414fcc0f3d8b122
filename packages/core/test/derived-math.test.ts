import {
  type DayStart,
  dailyLightIntegral,
  dewPoint,
  leafVpd,
  LightIntegral,
  pairAirReadings,
  ppfdFromLux,
} from '@hortus/core';
import { Temporal } from 'temporal-polyfill';
import { expect } from './support.js';

// The formulas of issue 35, written out here on their own so the tests do not check the code against itself.
const es = (t: number): number => 0.6108 * Math.E ** ((17.27 * t) / (t + 237.3));
const expectedVpd = (t: number, rh: number, offset: number): number => es(t + offset) - (es(t) * rh) / 100;
const expectedDewPoint = (t: number, rh: number): number => {
  const g = Math.log(rh / 100) + (17.62 * t) / (243.12 + t);
  return (243.12 * g) / (17.62 - g);
};

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A PPFD of `level` from `on` for 12 h each local day, else 0, sampled each minute over [from, to]. */
function squareWave(from: number, to: number, zone: string, onHour: number, level: number) {
  const samples: { time: number; value: number }[] = [];
  for (let time = from; time <= to; time += MINUTE) {
    const local = Temporal.Instant.fromEpochMilliseconds(time).toZonedDateTimeISO(zone);
    const minutes = local.hour * 60 + local.minute;
    const lit = minutes >= onHour * 60 && minutes < (onHour + 12) * 60;
    samples.push({ time, value: lit ? level : 0 });
  }
  return samples;
}

function instant(local: string, zone: string): number {
  return Temporal.PlainDateTime.from(local).toZonedDateTime(zone).epochMilliseconds;
}

describe('derived series: the formulas', () => {
  it('when 200+ (T, RH, leaf offset) cases are derived, then each VPD matches FAO-56 within 0.01 kPa', () => {
    let cases = 0;
    let worst = 0;
    for (let t = -5; t <= 45; t += 2.5) {
      for (let rh = 5; rh <= 100; rh += 9.5) {
        for (const offset of [-3, -2, -0.5, 0, 1.5]) {
          const got = leafVpd(t, rh, offset);
          worst = Math.max(worst, Math.abs(got - expectedVpd(t, rh, offset)));
          cases += 1;
        }
      }
    }
    expect(cases).to.be.at.least(200);
    expect(worst).to.be.below(0.01);
  });

  it('when known table values are asked, then VPD and dew point match them (25 °C, 50 %: 1.58 kPa, 13.9 °C)', () => {
    expect(leafVpd(25, 50, 0)).to.be.closeTo(1.584, 0.01);
    expect(dewPoint(25, 50)).to.be.closeTo(13.85, 0.1);
    expect(dewPoint(20, 100)).to.be.closeTo(20, 0.1);
  });

  it('when 200+ (T, RH) cases are derived, then each dew point matches Magnus (17.62, 243.12) within 0.1 °C', () => {
    let cases = 0;
    let worst = 0;
    for (let t = -10; t <= 45; t += 2.5) {
      for (let rh = 3; rh <= 100; rh += 9.7) {
        worst = Math.max(worst, Math.abs((dewPoint(t, rh) ?? Number.NaN) - expectedDewPoint(t, rh)));
        cases += 1;
      }
    }
    expect(cases).to.be.at.least(200);
    expect(worst).to.be.below(0.1);
    expect(dewPoint(20, 0)).to.equal(undefined);
  });

  it('when lux is converted, then PPFD is lux times the factor', () => {
    expect(ppfdFromLux(54_000, 0.0185)).to.be.closeTo(999, 1e-9);
    expect(ppfdFromLux(-3, 0.015)).to.equal(0);
  });

  it('when temperature and humidity arrive in any order, then pairs at most 2 min apart carry the later stamp', () => {
    const temperatures = [
      { time: 10 * MINUTE, value: 20 },
      { time: 15 * MINUTE, value: 21 },
      { time: 30 * MINUTE, value: 22 },
    ];
    const humidities = [
      { time: 10 * MINUTE + 5000, value: 60 },
      { time: 18 * MINUTE, value: 61 },
      { time: 30 * MINUTE, value: 62 },
    ];
    const expected = [
      { time: 10 * MINUTE + 5000, celsius: 20, humidity: 60 },
      { time: 30 * MINUTE, celsius: 22, humidity: 62 },
    ];
    expect(pairAirReadings(temperatures, humidities)).to.deep.equal(expected);
    expect(pairAirReadings([...temperatures].reverse(), [...humidities].reverse())).to.deep.equal(expected);
  });
});

describe('derived series: the daily light integral of a 12 h square wave (within 1 %)', () => {
  const level = 500;
  const analytic = (level * 12 * 3600) / 1e6; // 21.6 mol m⁻² d⁻¹
  const cases: { name: string; zone: string; day: string }[] = [
    { name: 'an ordinary day', zone: 'Europe/Berlin', day: '2026-06-10' },
    { name: 'the day clocks go forward (23 h)', zone: 'Europe/Berlin', day: '2026-03-29' },
    { name: 'the day clocks go back (25 h)', zone: 'Europe/Berlin', day: '2026-10-25' },
    { name: 'the day clocks go forward in New York', zone: 'America/New_York', day: '2026-03-08' },
  ];
  for (const { name, zone, day } of cases) {
    const next = Temporal.PlainDate.from(day).add({ days: 1 }).toString();
    const samples = squareWave(
      instant(`${day}T00:00`, zone) - 2 * HOUR,
      instant(`${next}T12:00`, zone),
      zone,
      8,
      level,
    );
    const light = new LightIntegral(samples);
    const check = (dayStart: DayStart, at: number): void => {
      const dli = dailyLightIntegral(light, at, dayStart, zone);
      expect(Math.abs(dli - analytic) / analytic, `DLI ${dli}`).to.be.below(0.01);
    };

    it(`when the day starts at midnight, on ${name}, then the DLI at 23:59 is the analytic value`, () => {
      check({ kind: 'midnight' }, instant(`${day}T23:59`, zone));
      // Half-way through the light the day so far has half of it.
      const half = dailyLightIntegral(light, instant(`${day}T14:00`, zone), { kind: 'midnight' }, zone);
      expect(half).to.be.closeTo(analytic / 2, analytic / 100);
    });

    it(`when the day starts at a local HH:MM (07:00), on ${name}, then the DLI before the next start is the analytic value`, () => {
      check({ kind: 'local', hour: 7, minute: 0 }, instant(`${next}T06:59`, zone));
    });

    it(`when the day is rolling 24 h, on ${name}, then the DLI at any time is the analytic value`, () => {
      check({ kind: 'rolling' }, instant(`${next}T03:00`, zone));
      check({ kind: 'rolling' }, instant(`${next}T11:00`, zone));
    });
  }

  it('when the light readings have a gap longer than 10 minutes, then the gap adds nothing', () => {
    const light = new LightIntegral([
      { time: 0, value: 1000 },
      { time: 5 * MINUTE, value: 1000 },
      { time: 20 * MINUTE, value: 1000 },
      { time: 25 * MINUTE, value: 1000 },
    ]);
    // Two stretches of 5 minutes at 1000 µmol m⁻² s⁻¹: 0.6 mol m⁻².
    expect(light.between(0, 25 * MINUTE)).to.be.closeTo(0.6, 1e-9);
  });
});
