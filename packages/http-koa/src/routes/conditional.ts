import { type RevisionSubject } from '@hortus/core';
import { type EntityTagOf } from './routing.js';

export { type EntityTagOf } from './routing.js';

/** The most groups whose tag a route keeps; past it the route starts again with none. */
const KEPT_TAGS = 1000;

/**
 * A weak entity tag from the store's revision of what the answer is made of (never a hash of the body: a
 * poll of an unchanged group is answered without building the body at all). The route name keeps two
 * routes' tags apart, the group name two groups' tags. Each group's tag text is kept for its revision:
 * polls of an unchanged group build it once.
 */
export function revisionTag(route: string, subject: RevisionSubject, groupParameter: string): EntityTagOf {
  const kept = new Map<string, { readonly revision: string; readonly tag: string }>();
  const tagOf = (name: string, revision: string): string => {
    const last = kept.get(name);
    if (last !== undefined && last.revision === revision) return last.tag;
    const tag = `W/"${route}.${encodeURIComponent(name.trim())}.${revision}"`;
    if (last === undefined && kept.size >= KEPT_TAGS) kept.clear();
    kept.set(name, { revision, tag });
    return tag;
  };
  // Not async: the revision's promise is handed on, sparing every poll a promise of its own.
  return ({ query }, { getRevision }) => {
    const group = query[groupParameter];
    return getRevision.execute({ group, subject }).then((revision) => tagOf(String(group), revision));
  };
}
