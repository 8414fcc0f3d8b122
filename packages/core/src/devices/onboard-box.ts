import { inject, injectable } from 'inversify';
import { CLOCK, type Clock } from '../shared/clock.port.js';
import { ThrottledError } from '../shared/errors.js';
import { LOGGER, type Logger } from '../shared/logger.port.js';
import { BoxKeys } from './box-keys.js';
import { BOX_SETTINGS, type BoxSettings } from './box-settings.js';
import { BoxSightings } from './box-sightings.js';
import { macOfBoxId } from './device-id.js';
import { type Device, PENDING_MAX_AGE_MS } from './device.js';
import { DEVICE_REPOSITORY, type DeviceRepository } from './device.port.js';

export interface OnboardingRequest {
  /** The `deviceId` header: the box's id as it sends it. */
  readonly deviceId: string;
  /** The `updateVersion` header. */
  readonly firmwareVersion?: string;
  /** The `lastactive` header: milliseconds since the box started. */
  readonly lastActive?: string;
  readonly address: string;
}

export type OnboardingOutcome =
  | { readonly registered: true; readonly device: Device; readonly apiKey: string }
  /** Unknown (then noted as pending) or locked: the box is told the same, so it keeps trying. */
  | {
      readonly registered: false;
      readonly reason: 'unknown' | 'locked' | 'malformed';
      readonly pending: boolean;
    };

const boxIdPattern = /^[A-Za-z0-9:._-]{1,64}$/u;
const MAX_VERSION_LENGTH = 32;
/** Bounds the memory of the per-address counts under a scan from many addresses. */
const MAX_TRACKED_ADDRESSES = 10_000;

/**
 * `GET /api/hardware`: a registered, unlocked box gets its group and its own key; any other gets refused
 * and, when its id is well-formed, noted as pending (bounded by MAX_PENDING_DEVICES). Refusals are counted
 * per address: beyond UNKNOWN_DEVICE_PER_MINUTE they are throttled before the store is asked.
 */
@injectable()
export class OnboardBox {
  private readonly refusals = new Map<string, number[]>();

  constructor(
    @inject(DEVICE_REPOSITORY) private readonly devices: DeviceRepository,
    @inject(BoxKeys) private readonly keys: BoxKeys,
    @inject(BOX_SETTINGS) private readonly settings: BoxSettings,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(BoxSightings) private readonly sightings: BoxSightings,
    @inject(LOGGER) private readonly logger: Logger,
  ) {}

  async execute(request: OnboardingRequest): Promise<OnboardingOutcome> {
    const now = this.clock.now();
    this.throttle(request.address, now.getTime());
    const sent = request.deviceId.trim();
    if (!boxIdPattern.test(sent)) return this.refused(request.address, now, 'malformed', false);
    const mac = macOfBoxId(sent);
    const firmwareVersion = cleanVersion(request.firmwareVersion);
    const device = await this.devices.find(sent, mac);
    const address = request.address.slice(0, 64);
    if (device === undefined) {
      await this.devices.removePendingSeenBefore(new Date(now.getTime() - PENDING_MAX_AGE_MS));
      const pending = await this.devices.recordPending(
        {
          boxId: sent,
          ...(mac === undefined ? {} : { mac }),
          ...(firmwareVersion === undefined ? {} : { firmwareVersion }),
          address,
          at: now,
        },
        this.settings.maxPending,
      );
      return this.refused(request.address, now, 'unknown', pending);
    }
    if (device.locked === true && !(await this.lockAdmits(device, address, now))) {
      return this.refused(request.address, now, 'locked', false);
    }

    const generation = Math.max(1, device.keyGeneration ?? 0);
    const apiKey = await this.keys.keyOf(device, generation);
    // Onboarding hands out the current key: a key left over from before a rotation stops working now.
    if (device.keyGeneration !== generation || device.previousKeyGeneration !== undefined) {
      await this.devices.setKeys(device.deviceId, await this.keys.keysOf(device, generation));
    }
    const uptime = Number(request.lastActive);
    await this.devices.recordOnboarding(
      device.deviceId,
      { at: now, address },
      {
        ...(device.moveRequest === undefined ? {} : { moveRequest: null }),
        ...(firmwareVersion === undefined ? {} : { firmwareVersion }),
        ...(Number.isSafeInteger(uptime) && uptime >= 0
          ? { bootedAt: new Date(now.getTime() - uptime) }
          : {}),
      },
    );
    this.sightings.note(request.address, device.deviceId, now);
    return { registered: true, device, apiKey };
  }

  /**
   * A locked device gets its key back only from the address it last onboarded from (a reboot), or from one
   * an administrator approved. Any other is refused, logged and kept for the administrator to see; an
   * approved move is not overwritten by later refusals, so a stranger cannot undo it.
   */
  private async lockAdmits(device: Device, address: string, now: Date): Promise<boolean> {
    const from = device.onboardings?.[0]?.address;
    const move = device.moveRequest;
    if (from === address || (move?.approved === true && move.address === address)) return true;
    this.logger.warn('locked device onboarding refused', {
      deviceId: device.deviceId,
      group: device.group,
      address,
      lastAddress: from ?? null,
    });
    if (move?.approved !== true) {
      await this.devices.update(device.deviceId, {
        moveRequest: { at: now, address, ...(from === undefined ? {} : { from }) },
      });
    }
    return false;
  }

  private refused(
    address: string,
    now: Date,
    reason: 'unknown' | 'locked' | 'malformed',
    pending: boolean,
  ): OnboardingOutcome {
    let times = this.refusals.get(address);
    if (times === undefined) {
      if (this.refusals.size >= MAX_TRACKED_ADDRESSES) {
        const oldest = this.refusals.keys().next();
        if (oldest.done !== true) this.refusals.delete(oldest.value);
      }
      this.refusals.set(address, (times = []));
    }
    times.push(now.getTime());
    return { registered: false, reason, pending };
  }

  private throttle(address: string, now: number): void {
    const times = this.refusals.get(address);
    if (times === undefined) return;
    while (times.length > 0 && (times[0] ?? 0) <= now - 60_000) times.shift();
    if (times.length === 0) {
      this.refusals.delete(address);
      return;
    }
    if (times.length >= this.settings.unknownPerMinute) {
      const wait = Math.max(1, Math.ceil(((times[0] ?? now) + 60_000 - now) / 1000));
      throw new ThrottledError('Too many onboarding requests of unknown devices from this address', wait);
    }
  }
}

function cleanVersion(value: string | undefined): string | undefined {
  const version = value?.trim();
  if (version === undefined || version === '') return undefined;
  return version.slice(0, MAX_VERSION_LENGTH);
}
