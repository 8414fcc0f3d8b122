import { inject, injectable } from 'inversify';
import { SERVER_SECRET_REPOSITORY, type ServerSecretRepository } from '../accounts/accounts.port.js';
import { ACCESS_KEY_SECRETS, type AccessKeySecrets } from '../access-keys/access-key-secrets.port.js';
import { BOX_KEY_DERIVER, type BoxKeyDeriver } from './box-settings.js';
import { type Device, type DeviceKeys } from './device.js';

/** Every box key starts with it, so a leaked one is recognisable (access keys start with `hk_`). */
export const BOX_KEY_PREFIX = 'hb_';
export const BOX_KEY_MAX_LENGTH = 200;

/**
 * A device's key is derived from the server's secret, the device's store id and the key's generation:
 * a box that onboards again (every boot) gets the same key back, while the store keeps only digests.
 * Rotating moves to the next generation; re-registering a device (a new store id) changes it too.
 */
@injectable()
export class BoxKeys {
  private secret: Promise<string> | undefined;

  constructor(
    @inject(SERVER_SECRET_REPOSITORY) private readonly serverSecrets: ServerSecretRepository,
    @inject(ACCESS_KEY_SECRETS) private readonly secrets: AccessKeySecrets,
    @inject(BOX_KEY_DERIVER) private readonly deriver: BoxKeyDeriver,
  ) {}

  async keyOf(device: Pick<Device, 'id'>, generation: number): Promise<string> {
    const secret = await this.serverSecret();
    return `${BOX_KEY_PREFIX}${this.deriver.derive(secret, `device-key:${device.id}:${generation}`)}`;
  }

  hash(key: string): string {
    return this.secrets.hash(key);
  }

  /** The digests of generation `generation`, and of `previousGeneration` when given (its key keeps working). */
  async keysOf(
    device: Pick<Device, 'id'>,
    generation: number,
    previousGeneration?: number,
  ): Promise<DeviceKeys> {
    const currentHash = this.hash(await this.keyOf(device, generation));
    if (previousGeneration === undefined) return { generation, currentHash };
    const hash = this.hash(await this.keyOf(device, previousGeneration));
    return { generation, currentHash, previous: { generation: previousGeneration, hash } };
  }

  private serverSecret(): Promise<string> {
    this.secret ??= this.serverSecrets
      .findOrCreate('box-keys', this.secrets.generate())
      .catch((error: unknown) => {
        this.secret = undefined;
        throw error;
      });
    return this.secret;
  }
}
