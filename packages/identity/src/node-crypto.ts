import { createHash, createHmac, randomBytes } from 'node:crypto';
import {
  ACCESS_KEY_PREFIX,
  ACCESS_KEY_SECRETS,
  type AccessKeySecrets,
  BOX_KEY_DERIVER,
  type BoxKeyDeriver,
  FIRMWARE_DIGEST,
  type FirmwareDigest,
  SHA256_HEX,
  type Sha256Hex,
} from '@hortus/core';
import { ContainerModule } from 'inversify';

/** Secrets from node:crypto: 256 random bits, and SHA-256 (enough for random keys; no slow hash needed). */
export class NodeAccessKeySecrets implements AccessKeySecrets {
  generate(): string {
    return `${ACCESS_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  }

  hash(secret: string): string {
    return createHash('sha256').update(secret, 'utf8').digest('hex');
  }
}

/** HMAC-SHA-256, URL-safe: a device's key from the server's secret (see core's BoxKeys). */
export class NodeBoxKeyDeriver implements BoxKeyDeriver {
  derive(secret: string, material: string): string {
    return createHmac('sha256', secret).update(material, 'utf8').digest('base64url');
  }
}
/** SHA-256 in lower-case hex: a firmware image's ETag and download address. */
export const sha256Hex: FirmwareDigest = (data) => createHash('sha256').update(data).digest('hex');

/** The core's hashing and key ports on node:crypto. */
export function nodeCryptoModule(): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind<AccessKeySecrets>(ACCESS_KEY_SECRETS).toConstantValue(new NodeAccessKeySecrets());
    bind<BoxKeyDeriver>(BOX_KEY_DERIVER).toConstantValue(new NodeBoxKeyDeriver());
    bind<FirmwareDigest>(FIRMWARE_DIGEST).toConstantValue(sha256Hex);
    bind<Sha256Hex>(SHA256_HEX).toConstantValue(sha256Hex);
  });
}
