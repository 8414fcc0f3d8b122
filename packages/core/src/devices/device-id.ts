/**
 * The two spellings of one box. Operators register the MAC printed on the label or in the serial log
 * (`24:6F:28:AA:00:01`, `24-6f-28-aa-00-01`, `246f28aa0001`); firmware 1.0.4 sends its factory MAC read as a
 * little-endian number in hex, so the bytes come out reversed and leading zeros vanish (`100aa286f24`).
 * Both are reduced to one canonical MAC: 12 lower-case hex digits in label order.
 */
const separated = /^[0-9a-f]{2}([:-])[0-9a-f]{2}(?:\1[0-9a-f]{2}){4}$/iu;
const hexOnly = /^[0-9a-f]{1,12}$/iu;

/** The canonical MAC of the form the box sends; undefined when it cannot be one. */
export function macOfBoxId(sent: string): string | undefined {
  if (!hexOnly.test(sent)) return undefined;
  const bytes = sent.toLowerCase().padStart(12, '0').match(/../gu) ?? [];
  return bytes.reverse().join('');
}

/**
 * The canonical MAC of a registered id. Twelve digits, with or without separators, are read as printed on
 * the label; fewer can only be the box's own form (it drops leading zeros). Anything else is no MAC (an
 * older device id), and is matched literally.
 */
export function macOfRegisteredId(id: string): string | undefined {
  if (separated.test(id)) return id.replace(/[:-]/gu, '').toLowerCase();
  if (/^[0-9a-f]{12}$/iu.test(id)) return id.toLowerCase();
  if (hexOnly.test(id)) return macOfBoxId(id);
  return undefined;
}

/**
 * The box id of what an esp32FOTA updater sends as `?id=` when its build turns that on: the same factory MAC
 * number, printed in decimal (`1102366404388` is `100aa286f24`). Undefined when it is no such number.
 */
export function boxIdOfUpdaterId(id: string): string | undefined {
  if (!/^[0-9]{1,15}$/u.test(id)) return undefined;
  const value = Number(id);
  return value > 0 && value < 2 ** 48 ? value.toString(16) : undefined;
}

/** What a box with this MAC sends as its deviceId. */
export function boxIdOfMac(mac: string): string {
  const reversed = (mac.match(/../gu) ?? []).reverse().join('');
  return reversed.replace(/^0+(?=.)/u, '');
}

/** The MAC as a label prints it: `24:6F:28:AA:00:01`. */
export function labelOfMac(mac: string): string {
  return (mac.match(/../gu) ?? []).join(':').toUpperCase();
}

/**
 * Every spelling under which a device with this MAC may be registered: the label's with colons, dashes or
 * none, in either case, and the box's own form (how the original service stored ids). Stores find a device
 * by these, so no canonical column has to be kept in step with the registered id.
 */
export function macSpellings(mac: string): string[] {
  const pairs = mac.match(/../gu) ?? [];
  const spellings = new Set<string>();
  for (const text of [mac.toLowerCase(), mac.toUpperCase()]) {
    const parts = text.match(/../gu) ?? pairs;
    spellings.add(parts.join(':'));
    spellings.add(parts.join('-'));
    spellings.add(parts.join(''));
  }
  spellings.add(boxIdOfMac(mac));
  return [...spellings];
}
