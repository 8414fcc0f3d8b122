import { type RevisionSubject } from '@hortus/core';
import { type EntityTagOf } from './routing.js';

export { type EntityTagOf } from './routing.js';

/**
 * A weak entity tag from the store's revision of what the answer is made of (never a hash of the body: a
 * poll of an unchanged group is answered without building the body at all). The route name keeps two
 * routes' tags apart, the group name two groups' tags.
 */
export function revisionTag(route: string, subject: RevisionSubject, groupParameter: string): EntityTagOf {
  return async ({ query }, { getRevision }) => {
    const group = query[groupParameter];
    const revision = await getRevision.execute({ group, subject });
    return `W/"${route}.${encodeURIComponent(String(group).trim())}.${revision}"`;
  };
}
