import { type AuditLog, type NewAuditEntry } from '@hortus/core';
import { at, expect, expectPlainEntity, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

function entry(offsetMs: number, change: Partial<NewAuditEntry> = {}): NewAuditEntry {
  return {
    at: at(offsetMs),
    actor: { kind: 'user', id: 'u-1', name: 'admin@example.org' },
    action: 'group.settings',
    target: 'gh-a',
    group: 'gh-a',
    ...change,
  };
}

export function auditLogContract(name: string, createStore: StoreFactory<'auditLog'>): void {
  describe(`${name}: AuditLog contract`, () => {
    const store = freshStorePerTest(createStore);
    const log = (): AuditLog => store().auditLog;

    it('when an entry is recorded, then it comes back as plain data: who, what, before and after as given, when', async () => {
      const before = [{ tempMax: 30 }, { alertRanges: { 'esp/air/co2': { max: 1500 } } }];
      const after = [{ tempMax: 32 }, { $weird: { 'a.b': null } }];

      const recorded = await log().record(entry(0, { before, after }));
      const [listed] = await log().list({ limit: 10 });

      expectPlainEntity(recorded);
      expect(listed).to.deep.equal(recorded);
      expect(listed).to.deep.include({
        action: 'group.settings',
        target: 'gh-a',
        group: 'gh-a',
        before,
        after,
        actor: { kind: 'user', id: 'u-1', name: 'admin@example.org' },
      });
      expect(listed?.at.getTime()).to.equal(at(0).getTime());
      expect(listed?.id).to.be.a('string').and.not.equal('');
    });

    it('when an entry has no group, before or after, then it has none of those fields', async () => {
      await log().record({
        at: at(0),
        actor: { kind: 'cli', id: 'root' },
        action: 'key.create',
        target: 'k-1',
      });

      const [listed] = await log().list({ limit: 10 });

      expect(listed).to.not.have.property('group');
      expect(listed).to.not.have.property('before');
      expect(listed).to.not.have.property('after');
      expect(listed?.actor).to.deep.equal({ kind: 'cli', id: 'root' });
    });

    it('when entries are listed, then newest first, those of one instant last recorded first, within the limit', async () => {
      await log().record(entry(0, { target: 'first' }));
      await log().record(entry(2 * MINUTE, { target: 'third' }));
      await log().record(entry(MINUTE, { target: 'second' }));
      await log().record(entry(2 * MINUTE, { target: 'fourth' }));

      expect((await log().list({ limit: 10 })).map((e) => e.target)).to.deep.equal([
        'fourth',
        'third',
        'second',
        'first',
      ]);
      expect((await log().list({ limit: 2 })).map((e) => e.target)).to.deep.equal(['fourth', 'third']);
    });

    it('when a group or a time is given, then only that group’s entries since then are listed', async () => {
      await log().record(entry(0, { target: 'a-old' }));
      await log().record(entry(MINUTE, { target: 'b', group: 'gh-b' }));
      await log().record(entry(2 * MINUTE, { target: 'a-new' }));
      await log().record({ at: at(3 * MINUTE), actor: { kind: 'cli' }, action: 'key.revoke', target: 'k' });

      expect((await log().list({ group: 'gh-a', limit: 10 })).map((e) => e.target)).to.deep.equal([
        'a-new',
        'a-old',
      ]);
      expect((await log().list({ since: at(MINUTE), limit: 10 })).map((e) => e.target)).to.deep.equal([
        'k',
        'a-new',
        'b',
      ]);
      expect(
        (await log().list({ group: 'gh-a', since: at(MINUTE), limit: 10 })).map((e) => e.target),
      ).to.deep.equal(['a-new']);
    });

    it('when a listed entry is changed by its reader, then the stored one is not', async () => {
      await log().record(entry(0, { after: { tempMax: 30 } }));
      const [listed] = await log().list({ limit: 1 });
      (listed?.after as { tempMax: number }).tempMax = 99;

      const [again] = await log().list({ limit: 1 });
      expect(again?.after).to.deep.equal({ tempMax: 30 });
    });
  });
}
