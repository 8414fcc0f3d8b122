import { inject, injectable } from 'inversify';
import { GROUP_REPOSITORY, type GroupRepository } from '../groups/group.port.js';
import { readSetting } from '../groups/group-settings.js';
import { RecordReadings, type RecordReadingsResult } from '../readings/record-readings.js';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { InvalidInputError } from '../shared/errors.js';
import { isValidTimeZone } from '../shared/time-zone.js';
import { isPlainObject } from '../shared/validation.js';
import { BOX_SETTINGS, type BoxSettings } from './box-settings.js';
import { BoxStamp } from './box-time.js';
import { type Device } from './device.js';

/** The most documents one insertMany may carry (a box sends one per request). */
export const MAX_BOX_DOCUMENTS = 100;

/** The zone a group's boxes stamp in: its `boxTimeZone` setting when it names a zone, else BOX_TIME_ZONE. */
export function boxTimeZoneOf(settings: unknown, fallback: string): string {
  const zone = readSetting(settings, 'boxTimeZone');
  return typeof zone === 'string' && isValidTimeZone(zone) ? zone : fallback;
}

/**
 * Readings a box posts to `datas`, through the same RecordReadings as every other reading. Each is stored
 * under the device's current group whatever the document says (a box keeps the group it learned at boot),
 * and its `time` is read as the wall clock of the group's box zone, as the firmware stamps it. One refused
 * document refuses the request: a box cannot tell which of its documents were stored.
 */
@injectable()
export class RecordBoxReadings {
  constructor(
    @inject(RecordReadings) private readonly record: RecordReadings,
    @inject(GROUP_REPOSITORY) private readonly groups: GroupRepository,
    @inject(BOX_SETTINGS) private readonly settings: BoxSettings,
    @inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** `time` of a document is a BoxStamp (the endpoint's `$date`): a wall-clock time or an instant. */
  async execute(device: Device, documents: readonly unknown[]): Promise<RecordReadingsResult> {
    if (documents.length === 0)
      throw InvalidInputError.forField('documents', 'must hold at least one document');
    if (documents.length > MAX_BOX_DOCUMENTS) {
      throw InvalidInputError.forField('documents', `must hold at most ${MAX_BOX_DOCUMENTS} documents`);
    }
    const arrival = this.clock.now();
    const group = await this.groups.findByName(device.group);
    const zone = boxTimeZoneOf(group?.settings, this.settings.timeZone);
    const items = documents.map((document, index) => {
      if (!isPlainObject(document))
        throw InvalidInputError.forField(`documents[${index}]`, 'must be an object');
      const { time } = document;
      const field = `documents[${index}].time`;
      if (time !== undefined && !(time instanceof BoxStamp)) {
        throw InvalidInputError.forField(field, 'must be a date ({"$date": ...})');
      }
      return {
        topic: document['topic'],
        value: document['value'],
        group: device.group,
        ...(time === undefined ? {} : { time: time.requireInstantIn(zone, arrival, field).toISOString() }),
      };
    });
    const result = await this.record.execute(items, { allOrNothing: true });
    const [first] = result.rejected;
    if (first !== undefined) {
      const where = documents.length === 1 ? '' : `document ${first.index}: `;
      throw new InvalidInputError(`${where}${first.reason}`);
    }
    return result;
  }
}
