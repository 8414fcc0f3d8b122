import { randomBytes } from 'node:crypto';
import { type InstallationValues } from '@hortus/core';
import { type MqttConfig } from './mqtt-config.js';

/** How the bridge shows itself to the broker. */
export interface MqttIdentity {
  /** MQTT_CLIENT_ID, or `hortus-<installation id>-<random per process>`. */
  readonly clientId: string;
  /** MQTT_SHARED_GROUP, `false` for off, or `hortus-<random per installation>`. */
  readonly sharedGroup: string | false;
  /** What is subscribed: the filter, or `$share/<sharedGroup>/<filter>`. */
  readonly subscription: string;
}

/**
 * The client id and shared-subscription group a server uses unless they are configured.
 *
 * - Client id: a broker disconnects a client when another connects with its id, so a fixed, guessable id
 *   lets any broker user throw the server off, and two servers sharing one would throw each other off.
 *   The installation's id tells an operator whose connection it is; the random part, new per process, keeps
 *   every server's id its own and unguessable.
 * - Shared group: any broker user who subscribes to `$share/<group>/<filter>` takes a share of the
 *   readings away from the server, and most brokers' access lists cannot stop it (see docs/security.md).
 *   A random name, made once per installation and kept in the store, is shared by the installation's
 *   servers (so each message is stored once) and known to no one else.
 */
export async function mqttIdentityOf(
  config: MqttConfig,
  installation: InstallationValues,
  filter: string,
): Promise<MqttIdentity> {
  const clientId =
    config.clientId ?? `hortus-${await installation.valueOf('id', randomHex(4))}-${randomHex(8)}`;
  const sharedGroup =
    config.sharedGroup ?? `hortus-${await installation.valueOf('mqtt-shared-group', randomHex(16))}`;
  const subscription = sharedGroup === false ? filter : `$share/${sharedGroup}/${filter}`;
  return { clientId, sharedGroup, subscription };
}

function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}
