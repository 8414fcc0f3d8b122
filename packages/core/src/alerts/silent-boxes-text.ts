import { labelOfMac, macOfRegisteredId } from '../devices/device-id.js';
import { formatLocalTime } from '../shared/time-zone.js';

/**
 * The words of the "boxes silent since the server started" alert (see CheckBoxesSilentSinceStart), kept in
 * this one place so that a change of how alerts are worded touches one file.
 */

/** Boxes named in one message; a group with more says how many others, and where to see them. */
export const MAX_BOXES_NAMED = 50;

/** A box as an operator finds it: its registered id, and the MAC of its label when the id is another form. */
export function boxName(deviceId: string): string {
  const mac = macOfRegisteredId(deviceId);
  if (mac === undefined) return deviceId;
  const label = labelOfMac(mac);
  return label === deviceId.toUpperCase() ? deviceId : `${deviceId} (MAC ${label})`;
}

function boxList(group: string, deviceIds: readonly string[]): string {
  const named = deviceIds.slice(0, MAX_BOXES_NAMED).map(boxName).join(', ');
  const more = deviceIds.length - MAX_BOXES_NAMED;
  return more > 0 ? `${named} and ${more} more (hortus device list --group ${group})` : named;
}

/** The alert: which boxes, since when (in the group's zone), and what to do about it. */
export function silentSinceStartText(
  group: string,
  deviceIds: readonly string[],
  serverStart: Date,
  timeZone: string,
): string {
  const one = deviceIds.length === 1;
  return (
    `${one ? 'Box' : `${deviceIds.length} boxes`} of group ${group} ${one ? 'has' : 'have'} sent nothing since ` +
    `the server started at ${formatLocalTime(serverStart, timeZone)}: ${boxList(group, deviceIds)}. ` +
    `Power-cycle ${one ? 'it' : 'them'}: a box that started before the server could be reached gives up ` +
    `after 50 tries and stays silent until it is switched off and on again`
  );
}

/** The alert is over: every box it named has reported again (or is no longer registered in the group). */
export function backSinceStartText(group: string, deviceIds: readonly string[]): string {
  const one = deviceIds.length === 1;
  return `${one ? 'Box' : `The ${deviceIds.length} boxes`} of group ${group} silent since the server started ${one ? 'is' : 'are'} reporting again: ${boxList(group, deviceIds)}`;
}
