import { type FindDevice } from '@hortus/core';

/** How long a topic level's owner (or its absence) is believed: a device moved to another group is seen after this. */
export const OWNER_TTL_MS = 30_000;
/** Bounds the cache: levels come from messages, so their number is up to the boxes. */
const MAX_CACHED_LEVELS = 10_000;
const BOX_USER_PREFIX = 'box-';

/**
 * Which level of a topic names its publisher: the one right after the fixed levels of the subscription's
 * filter (`esp/#` → the second), where the documented broker ACL (`pattern write esp/%u/#`) puts the
 * box's own user name, so no other broker user can publish there.
 */
export function ownerLevelIndex(filter: string): number {
  const levels = filter.split('/');
  const wildcard = levels.findIndex((level) => level === '+' || level === '#');
  return wildcard === -1 ? levels.length : wildcard;
}

/**
 * The group of the registered device a topic's owner level names, cached for OWNER_TTL_MS. Only a level
 * `box-<id>` (how the docs name box users; the id in any form of its MAC) names one: were a bare level
 * enough, registering a device called `air` would capture the legacy shared `esp/air/temperature` of
 * every group. Topics whose level names no registered device have no owner.
 */
export class TopicOwners {
  private readonly cache = new Map<string, { group: string | undefined; until: number }>();

  constructor(
    private readonly findDevice: FindDevice,
    private readonly levelIndex: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The owning group of each topic (undefined: no owner). Rejects when the store does. */
  async groupsOf(topics: Iterable<string>): Promise<Map<string, string | undefined>> {
    const groups = new Map<string, string | undefined>();
    for (const topic of topics) {
      if (groups.has(topic)) continue;
      const level = topic.split('/')[this.levelIndex];
      groups.set(
        topic,
        level?.startsWith(BOX_USER_PREFIX) === true ? await this.groupOfLevel(level) : undefined,
      );
    }
    return groups;
  }

  private async groupOfLevel(level: string): Promise<string | undefined> {
    const at = this.now();
    const cached = this.cache.get(level);
    if (cached !== undefined && cached.until > at) return cached.group;
    const device = await this.findDevice.execute(level.slice(BOX_USER_PREFIX.length));
    if (this.cache.size >= MAX_CACHED_LEVELS) this.cache.clear();
    this.cache.set(level, { group: device?.group, until: at + OWNER_TTL_MS });
    return device?.group;
  }
}
