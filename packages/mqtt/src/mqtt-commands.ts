import {
  type AuthorizeCredential,
  InvalidInputError,
  MQTT_ACTOR,
  type Logger,
  NotFoundError,
  type SetActionValue,
  switchStates,
} from '@hortus/core';
import { type WarningGate } from './warning-gate.js';

/** What became of the `.../set` messages received, by result (`/metrics`: hortus_mqtt_commands_total). */
export interface MqttCommandCounts {
  readonly applied: number;
  /** No action of that name in that group. */
  readonly unknownAction: number;
  /** A payload other than `on`/`off`. */
  readonly badValue: number;
  /** A retained command: it would switch again at every (re)connect, so it is never applied. */
  readonly retained: number;
  /** The store failed. */
  readonly failed: number;
  /** Its credential may not switch the group (a viewer's, another group's), or none was sent where one is required. */
  readonly refused: number;
}

/** The MQTT 5 user property a command's credential travels in: `Bearer <access key or log-in token>`. */
export const COMMAND_CREDENTIAL_PROPERTY = 'authorization';

/** How commands are checked: core's decision for the credential they carry, and whether one is required. */
export interface CommandAccess {
  readonly authorize: AuthorizeCredential;
  readonly required: boolean;
}

const EXCERPT_CHARS = 64;

/**
 * `<publishPrefix>/<group>/actions/<object>/set` with `on` or `off` switches the action through SetActionValue,
 * the use case behind the HTTP route, so the revision, the retained state topic and the engine see it as
 * any other switch. Who may publish there is the broker's ACL (docs/security.md); a command that carries a
 * credential (COMMAND_CREDENTIAL_PROPERTY) is also decided by core's permission model, as an HTTP switch is,
 * and with MQTT_COMMAND_CREDENTIALS=required every command must carry one.
 */
export class MqttCommands {
  private counts = { applied: 0, unknownAction: 0, badValue: 0, retained: 0, failed: 0, refused: 0 };
  /** Commands run one after another: `on` then `off` must end `off`. */
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly prefix: string,
    private readonly setActionValue: SetActionValue,
    private readonly warnings: WarningGate,
    private readonly log: Logger,
    private readonly access?: CommandAccess,
  ) {}

  /** The topic filter to subscribe to (wrapped in `$share/...` by the caller when servers share one). */
  filter(): string {
    return `${this.prefix}/+/actions/+/set`;
  }

  stats(): MqttCommandCounts {
    return { ...this.counts };
  }

  /** The group and object of a command topic, or undefined for any other topic. */
  target(topic: string): { group: string; object: string } | undefined {
    if (!topic.startsWith(`${this.prefix}/`)) return undefined;
    const levels = topic.slice(this.prefix.length + 1).split('/');
    const [group, actions, object, set] = levels;
    if (levels.length !== 4 || actions !== 'actions' || set !== 'set') return undefined;
    if (group === undefined || object === undefined || group === '' || object === '') return undefined;
    return { group, object };
  }

  /** Queues the command; the promise settles when it has been applied or ignored (never rejects). */
  handle(
    target: { group: string; object: string },
    payload: Buffer,
    retained: boolean,
    credential?: string,
  ): Promise<void> {
    this.running = this.running.then(() => this.apply(target, payload, retained, credential));
    return this.running;
  }

  /** Settles when every command received so far has been handled. */
  idle(): Promise<void> {
    return this.running;
  }

  private async apply(
    { group, object }: { group: string; object: string },
    payload: Buffer,
    retained: boolean,
    credential: string | undefined,
  ): Promise<void> {
    if (retained) {
      this.counts.retained += 1;
      this.warnings.warn('mqtt.command_ignored', { group, object, reason: 'retained command' });
      return;
    }
    const value = payload.toString('utf8', 0, EXCERPT_CHARS).trim().toLowerCase();
    if (!(switchStates as readonly string[]).includes(value)) {
      this.counts.badValue += 1;
      this.warnings.warn('mqtt.command_ignored', {
        group,
        object,
        reason: 'value must be on or off',
        value: payload.toString('utf8', 0, EXCERPT_CHARS),
      });
      return;
    }
    try {
      const refusal = await this.refusal(group, credential);
      if (refusal !== undefined) {
        this.counts.refused += 1;
        this.warnings.warn('mqtt.command_ignored', { group, object, reason: refusal });
        return;
      }
      await this.setActionValue.execute({ group, object, value, actor: MQTT_ACTOR });
      this.counts.applied += 1;
      this.log.info('mqtt.command_applied', { group, object, value });
    } catch (error) {
      if (error instanceof NotFoundError || error instanceof InvalidInputError) {
        this.counts.unknownAction += 1;
        this.warnings.warn('mqtt.command_ignored', { group, object, reason: 'no such action' });
        return;
      }
      this.counts.failed += 1;
      this.log.error('mqtt.command_failed', {
        group,
        object,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /** Why the command's credential may not switch the group, or undefined when it may (or none is needed). */
  private async refusal(group: string, credential: string | undefined): Promise<string | undefined> {
    if (this.access === undefined) return undefined;
    if (credential === undefined) {
      return this.access.required
        ? `a credential is required (user property ${COMMAND_CREDENTIAL_PROPERTY})`
        : undefined;
    }
    const decision = await this.access.authorize.execute(credential, 'write', { groups: [group] });
    return decision.allowed ? undefined : decision.reason;
  }
}
