import { injectable } from 'inversify';

/** Bounds the memory under requests from many addresses; the oldest address is forgotten first. */
const MAX_ADDRESSES = 100_000;
/** Boxes behind one NAT share an address: a few are kept per address, so that sharing can be seen. */
const MAX_DEVICES_PER_ADDRESS = 8;

interface Sighting {
  readonly deviceId: string;
  at: number;
}

/**
 * Which registered boxes' requests (onboarding, readings, actions) came from which address, in this
 * process. The firmware updater of these boxes sends no id with its manifest request, so the manifest is
 * matched to a box by the address it comes from (see OfferFirmware).
 */
@injectable()
export class BoxSightings {
  private readonly byAddress = new Map<string, Sighting[]>();

  note(address: string, deviceId: string, at: Date): void {
    let seen = this.byAddress.get(address);
    if (seen === undefined) {
      if (this.byAddress.size >= MAX_ADDRESSES) {
        const oldest = this.byAddress.keys().next();
        if (oldest.done !== true) this.byAddress.delete(oldest.value);
      }
      this.byAddress.set(address, (seen = []));
    }
    const known = seen.find((sighting) => sighting.deviceId === deviceId);
    if (known !== undefined) {
      known.at = Math.max(known.at, at.getTime());
      return;
    }
    if (seen.length >= MAX_DEVICES_PER_ADDRESS) seen.sort((a, b) => b.at - a.at).pop();
    seen.push({ deviceId, at: at.getTime() });
  }

  /** The devices seen at this address since `since`, newest first. */
  seenSince(address: string, since: Date): string[] {
    return (this.byAddress.get(address) ?? [])
      .filter((sighting) => sighting.at >= since.getTime())
      .sort((a, b) => b.at - a.at)
      .map((sighting) => sighting.deviceId);
  }
}
