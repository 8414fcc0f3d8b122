/** Documents per batch of `hortus migrate`: the default and the most --batch-size may ask. */
export const MIGRATE_DEFAULT_BATCH = 5000;
export const MIGRATE_MAX_BATCH = 10_000;
