import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { CORE_SETTINGS, type CoreSettings } from '../shared/settings.js';
import { localHoursSoFar } from '../shared/time-zone.js';
import { type Reading, sensorTopics } from './reading.js';
import { READING_REPOSITORY, type ReadingRepository } from './reading.port.js';
import { type ReadingQuery, toReadingRange } from './query-readings.js';

export interface HourlyReading {
  /** Local hour of the day, 0-23. */
  readonly _id: number;
  /** The earliest reading of that hour. */
  readonly data: Reading;
}

@injectable()
export class GetTodayHourlyReadings {
  constructor(
    @inject(READING_REPOSITORY) private readonly readings: ReadingRepository,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(CORE_SETTINGS) private readonly settings: CoreSettings,
  ) {}

  /**
   * Today's readings (today in the configured zone), the earliest of each local hour, hours ascending.
   * One indexed lookup per hour instead of loading the whole day. On the day clocks fall back, the
   * repeated hour is one bucket; on the day they spring forward, the skipped hour is absent.
   */
  async execute(
    query: Omit<ReadingQuery, 'topic' | 'startDate' | 'endDate' | 'count'>,
  ): Promise<HourlyReading[]> {
    const { timeZone } = this.settings;
    const now = this.clock.now();
    const range = toReadingRange({ ...query, topic: sensorTopics.temperature });
    const hours = localHoursSoFar(now, timeZone);
    const earliest = await Promise.all(
      hours.map(({ start, end }) =>
        this.readings.oldest({ ...range, startDate: start, endDate: new Date(end.getTime() - 1) }),
      ),
    );
    return hours.flatMap(({ hour }, index) => {
      const data = earliest[index];
      return data === undefined ? [] : [{ _id: hour, data }];
    });
  }
}
