import { assertTimeZone, fromLocal, laterInstantOfRepeatedLocal } from '../shared/time-zone.js';

/**
 * The original stored a box's local wall time as if it were UTC. Given the zone the boxes ran in, this
 * reads such a time as that zone's wall time and answers the real instant. A wall time that the zone
 * skips (spring forward) moves forward by the gap. The hour the zone shows twice (fall back) is told
 * apart per series (group and topic) by the order the readings are read in, the source's insertion
 * order: a wall time earlier than the series' last one in that hour starts the second pass, whose
 * readings get the later instant; so does the same wall time again, read as a repeat (see instantOf).
 */
export class WallClockTimes {
  /** Instants by wall-clock minute: readings come in time order, so nearly every lookup is a hit. */
  private readonly minutes = new Map<number, { earlier: number; later: number | undefined }>();
  /** Per series, in the repeated hour: the last reading read and whether the second pass began. */
  private readonly passes = new Map<
    string,
    {
      day: number;
      lastWall: number;
      second: boolean;
      storedAt?: number | undefined;
      value?: number | undefined;
    }
  >();
  /** Readings placed at the later instant of a repeated hour. */
  secondPass = 0;

  constructor(readonly timeZone: string) {
    assertTimeZone(timeZone);
  }

  /**
   * `read` tells a repeat of the same wall time apart: when the original stored it (from its ObjectId) and
   * its value. The same wall time again starts the second pass when it was stored at least half an hour
   * after the last one (an hourly reading, an hour later), or with another value; else it is a true duplicate.
   */
  instantOf(labelled: Date, series = '', read: RepeatEvidence = {}): Date {
    const ms = labelled.getTime();
    const minute = Math.floor(ms / 60_000) * 60_000;
    const instants = this.minuteInstants(minute);
    if (instants.later === undefined) return new Date(instants.earlier + (ms - minute));
    const day = Math.floor(ms / 86_400_000);
    const pass = this.passes.get(series);
    if (pass === undefined || pass.day !== day) {
      if (this.passes.size >= 100_000) this.passes.clear();
      this.passes.set(series, { day, lastWall: ms, second: false, ...read });
      return new Date(instants.earlier + (ms - minute));
    }
    if (ms < pass.lastWall || (ms === pass.lastWall && isLaterPass(pass, read))) pass.second = true;
    pass.lastWall = ms;
    pass.storedAt = read.storedAt;
    pass.value = read.value;
    if (!pass.second) return new Date(instants.earlier + (ms - minute));
    this.secondPass += 1;
    return new Date(instants.later + (ms - minute));
  }

  private minuteInstants(minute: number): { earlier: number; later: number | undefined } {
    let instants = this.minutes.get(minute);
    if (instants === undefined) {
      const wall = new Date(minute);
      const local = {
        year: wall.getUTCFullYear(),
        month: wall.getUTCMonth() + 1,
        day: wall.getUTCDate(),
        hour: wall.getUTCHours(),
        minute: wall.getUTCMinutes(),
      };
      instants = {
        earlier: fromLocal(local, this.timeZone).getTime(),
        later: laterInstantOfRepeatedLocal(local, this.timeZone)?.getTime(),
      };
      if (this.minutes.size >= 100_000) this.minutes.clear();
      this.minutes.set(minute, instants);
    }
    return instants;
  }
}

/** What tells a reading at the same wall time as the last one apart: when it was stored, and its value. */
export interface RepeatEvidence {
  /** When the original stored it (ms), from its ObjectId; absent for ids of another kind. */
  readonly storedAt?: number | undefined;
  readonly value?: number | undefined;
}

/** Half an hour: readings of one wall time stored this far apart are an hour apart, not a duplicate. */
const LATER_PASS_GAP_MS = 30 * 60_000;

function isLaterPass(last: RepeatEvidence, read: RepeatEvidence): boolean {
  if (last.storedAt !== undefined && read.storedAt !== undefined) {
    if (read.storedAt - last.storedAt >= LATER_PASS_GAP_MS) return true;
  }
  return last.value !== undefined && read.value !== undefined && last.value !== read.value;
}
