import { type NewNotification, type Notification, type NotificationRepository } from '@hortus/core';
import { at, expect, expectPlainEntity, freshStorePerTest, MINUTE, type StoreFactory } from './store.js';

const GROUP = 'greenhouse-a';

function notification(offsetMs: number, message = `at ${offsetMs}`, group = GROUP): NewNotification {
  return { group, time: at(offsetMs), message };
}

export function notificationRepositoryContract(
  name: string,
  createStore: StoreFactory<'notifications'>,
): void {
  describe(`${name}: NotificationRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): NotificationRepository => store().notifications;

    describe('create', () => {
      it('when a notification is created, then it is plain data, not ignored, with its time as a Date', async () => {
        const created = await repository().create({
          ...notification(0, 'moisture low'),
          topic: 'esp/ground/moisture/3',
          value: 29.5,
        });

        expectPlainEntity(created);
        expect(created).to.include({
          group: GROUP,
          message: 'moisture low',
          ignore: 'false',
          topic: 'esp/ground/moisture/3',
          value: 29.5,
        });
        expect(created.time).to.be.an.instanceOf(Date);
        expect(created.time.getTime()).to.equal(at(0).getTime());
      });

      it('when topic and value are not given, then the notification has neither field', async () => {
        await repository().create(notification(0));

        const [listed] = await repository().listOpen(GROUP);

        expect(listed).to.not.have.property('topic');
        expect(listed).to.not.have.property('value');
      });
    });

    describe('listOpen', () => {
      it('when notifications are listed, then the most recently created comes first, whatever their times', async () => {
        await repository().create(notification(5 * MINUTE, 'first'));
        await repository().create(notification(0, 'second'));
        await repository().create(notification(9 * MINUTE, 'third'));

        const found = await repository().listOpen(GROUP);

        expect(found.map((n) => n.message)).to.deep.equal(['third', 'second', 'first']);
      });

      it('when some are ignored or belong to another group, then only the open ones of the group are listed', async () => {
        await repository().create(notification(0, 'open'));
        await repository().create(notification(MINUTE, 'ignored'));
        await repository().create(notification(2 * MINUTE, 'other group', 'greenhouse-b'));
        await repository().ignoreAt(GROUP, [at(MINUTE)]);

        const found = await repository().listOpen(GROUP);

        expect(found.map((n) => [n.message, n.ignore])).to.deep.equal([['open', 'false']]);
      });

      it('when the group has none, then it lists nothing', async () => {
        expect(await repository().listOpen(GROUP)).to.deep.equal([]);
      });

      it('when the caller mutates an answer, then the stored notification is unchanged', async () => {
        await repository().create(notification(0, 'kept'));
        const [listed] = (await repository().listOpen(GROUP)) as [Notification];

        listed.time.setTime(0);
        (listed as { ignore: string }).ignore = 'true';

        const [again] = await repository().listOpen(GROUP);
        expect(again?.time.getTime()).to.equal(at(0).getTime());
        expect(again?.ignore).to.equal('false');
      });
    });

    describe('ignoreAt', () => {
      it('when times match, then every matching notification of the group is ignored and the matches are counted', async () => {
        await repository().create(notification(0, 'a'));
        await repository().create(notification(MINUTE, 'b'));
        await repository().create(notification(2 * MINUTE, 'c'));

        const matched = await repository().ignoreAt(GROUP, [at(0), at(2 * MINUTE)]);

        expect(matched).to.equal(2);
        expect((await repository().listOpen(GROUP)).map((n) => n.message)).to.deep.equal(['b']);
      });

      it('when the list repeats a time and holds unknown times, then each match counts once and unknown ones count zero', async () => {
        await repository().create(notification(0, 'a'));
        await repository().create(notification(MINUTE, 'b'));

        const matched = await repository().ignoreAt(GROUP, [
          at(0),
          at(0),
          at(7 * MINUTE),
          new Date(at(0).getTime()),
        ]);

        expect(matched).to.equal(1);
        expect((await repository().listOpen(GROUP)).map((n) => n.message)).to.deep.equal(['b']);
      });

      it('when two notifications share a time, then both are ignored and both counted', async () => {
        await repository().create(notification(0, 'a'));
        await repository().create(notification(0, 'b'));

        expect(await repository().ignoreAt(GROUP, [at(0)])).to.equal(2);
        expect(await repository().listOpen(GROUP)).to.deep.equal([]);
      });

      it('when nothing matches, then it answers 0 and changes nothing', async () => {
        await repository().create(notification(0, 'a'));

        expect(await repository().ignoreAt(GROUP, [at(MINUTE)])).to.equal(0);
        expect(await repository().ignoreAt(GROUP, [])).to.equal(0);
        expect(await repository().ignoreAt('greenhouse-b', [at(0)])).to.equal(0);
        expect(await repository().listOpen(GROUP)).to.have.lengthOf(1);
      });

      it('when a time is one millisecond off, then it does not match', async () => {
        await repository().create(notification(0, 'a'));

        expect(await repository().ignoreAt(GROUP, [at(1), at(-1)])).to.equal(0);
      });

      it('when another group has a notification at the same time, then it stays open', async () => {
        await repository().create(notification(0, 'mine'));
        await repository().create(notification(0, 'theirs', 'greenhouse-b'));

        await repository().ignoreAt(GROUP, [at(0)]);

        expect((await repository().listOpen('greenhouse-b')).map((n) => n.message)).to.deep.equal(['theirs']);
      });

      it('when a notification is ignored again, then it still counts as matched', async () => {
        await repository().create(notification(0, 'a'));
        await repository().ignoreAt(GROUP, [at(0)]);

        expect(await repository().ignoreAt(GROUP, [at(0)])).to.equal(1);
      });
    });

    describe('countOpen', () => {
      it('when some notifications of the group are ignored, then it counts only the open ones of that group', async () => {
        await repository().create(notification(0));
        await repository().create(notification(MINUTE));
        await repository().create(notification(2 * MINUTE));
        await repository().create(notification(0, 'other group', 'greenhouse-b'));

        await repository().ignoreAt(GROUP, [at(MINUTE)]);

        expect(await repository().countOpen(GROUP)).to.equal(2);
        expect(await repository().countOpen('greenhouse-b')).to.equal(1);
        expect(await repository().countOpen('no-such-group')).to.equal(0);
      });
    });

    describe('addMissing', () => {
      it('when notifications are imported, then they keep their ignore state and only the open ones are listed', async () => {
        const added = await repository().addMissing([
          { ...notification(0, 'open one'), ignore: 'false', topic: 'esp/air/temperature', value: 31 },
          { ...notification(MINUTE, 'ignored one'), ignore: 'true' },
        ]);

        expect(added).to.equal(2);
        const open = await repository().listOpen(GROUP);
        expect(open.map((n) => n.message)).to.deep.equal(['open one']);
        expect(open[0]).to.include({ ignore: 'false', topic: 'esp/air/temperature', value: 31 });
        expect(await repository().ignoreAt(GROUP, [at(MINUTE)])).to.equal(1);
      });

      it("when the original's check records (ignore active or passive) are imported, then they are kept, not open, and read as ignored", async () => {
        const added = await repository().addMissing([
          { ...notification(0, 'check active'), ignore: 'active' },
          { ...notification(MINUTE, 'check passive'), ignore: 'passive' },
          { ...notification(2 * MINUTE, 'open one'), ignore: 'false' },
        ]);

        expect(added).to.equal(3);
        expect((await repository().listOpen(GROUP)).map((n) => n.message)).to.deep.equal(['open one']);
        expect(await repository().countOpen(GROUP)).to.equal(1);
        // Kept: importing them again stores nothing, and the ignore route still finds them.
        expect(
          await repository().addMissing([{ ...notification(0, 'check active'), ignore: 'active' }]),
        ).to.equal(0);
        expect(await repository().ignoreAt(GROUP, [at(0), at(MINUTE)])).to.equal(2);
      });

      it('when a (group, time, message) is stored or repeated in the list, then it is stored once', async () => {
        await repository().create(notification(0, 'stored before'));

        const added = await repository().addMissing([
          { ...notification(0, 'stored before'), ignore: 'false' },
          { ...notification(0, 'same time, other message'), ignore: 'false' },
          { ...notification(0, 'same time, other message'), ignore: 'true' },
          { ...notification(0, 'stored before', 'greenhouse-b'), ignore: 'false' },
        ]);

        expect(added).to.equal(2);
        expect((await repository().listOpen(GROUP)).map((n) => n.message).sort()).to.deep.equal([
          'same time, other message',
          'stored before',
        ]);
        expect(await repository().listOpen('greenhouse-b')).to.have.lengthOf(1);
        expect(
          await repository().addMissing([{ ...notification(0, 'stored before'), ignore: 'false' }]),
        ).to.equal(0);
      });
    });

    describe('deleteByGroup', () => {
      it('when the notifications of a group are deleted, then ignored ones go too and other groups keep theirs', async () => {
        await repository().create(notification(0));
        await repository().create(notification(1000));
        await repository().ignoreAt(GROUP, [new Date((await repository().listOpen(GROUP))[0]?.time ?? 0)]);
        await repository().create(notification(0, 'other', 'greenhouse-b'));

        expect(await repository().deleteByGroup(GROUP)).to.equal(2);

        expect(await repository().countOpen(GROUP)).to.equal(0);
        expect(await repository().countOpen('greenhouse-b')).to.equal(1);
        // Nothing left to skip: an imported copy of a deleted one is stored again.
        expect(await repository().addMissing([{ ...notification(0), ignore: 'true' }])).to.equal(1);
      });
    });

    describe('severity and acknowledge', () => {
      const acknowledgement = {
        at: at(7 * MINUTE),
        by: { kind: 'user' as const, id: 'u-1', name: 'grower@example.org' },
      };

      it('when a notification is created with a severity, then it is kept and listed; without one, none is read', async () => {
        await repository().create({ ...notification(0, 'plain') });
        await repository().create({ ...notification(MINUTE, 'loud'), severity: 'critical' });

        const [loud, plain] = await repository().listOpen(GROUP);

        expect(loud).to.include({ message: 'loud', severity: 'critical' });
        expect(plain).to.not.have.property('severity');
        expect(plain).to.not.have.property('acknowledged');
      });

      it('when a notification is acknowledged, then who and when are kept, it stays open, and find reads it', async () => {
        const created = await repository().create({ ...notification(0), severity: 'warning' });

        const acknowledged = await repository().acknowledge(GROUP, created.id, acknowledgement);

        expect(acknowledged).to.not.equal(undefined);
        expectPlainEntity(acknowledged as Notification);
        expect(acknowledged?.acknowledged?.at.getTime()).to.equal(at(7 * MINUTE).getTime());
        expect(acknowledged?.acknowledged?.by).to.deep.equal(acknowledgement.by);
        const [listed] = await repository().listOpen(GROUP);
        expect(listed?.acknowledged?.by).to.deep.equal(acknowledgement.by);
        expect(listed).to.include({ ignore: 'false', severity: 'warning' });
        const found = await repository().find(GROUP, created.id);
        expect(found?.acknowledged?.at).to.be.an.instanceOf(Date);
      });

      it('when a notification is acknowledged twice, then the first acknowledgement stays', async () => {
        const created = await repository().create(notification(0));
        await repository().acknowledge(GROUP, created.id, acknowledgement);

        const again = await repository().acknowledge(GROUP, created.id, {
          at: at(9 * MINUTE),
          by: { kind: 'cli', id: 'root' },
        });

        expect(again?.acknowledged?.by).to.deep.equal(acknowledgement.by);
        expect(again?.acknowledged?.at.getTime()).to.equal(at(7 * MINUTE).getTime());
      });

      it('when the id is unknown, malformed or of another group, then acknowledge and find answer undefined and change nothing', async () => {
        const created = await repository().create(notification(0));
        const before = await repository().revision(GROUP);

        expect(await repository().acknowledge('greenhouse-b', created.id, acknowledgement)).to.equal(
          undefined,
        );
        expect(await repository().acknowledge(GROUP, 'not-an-id', acknowledgement)).to.equal(undefined);
        expect(await repository().acknowledge(GROUP, '0123456789abcdef01234567', acknowledgement)).to.equal(
          undefined,
        );
        expect(await repository().find('greenhouse-b', created.id)).to.equal(undefined);
        expect(await repository().find(GROUP, 'not-an-id')).to.equal(undefined);
        expect((await repository().find(GROUP, created.id))?.acknowledged).to.equal(undefined);
        expect(await repository().revision(GROUP)).to.equal(before);
      });

      it('when a notification is acknowledged, then the revision changes; acknowledged again, it stays', async () => {
        const created = await repository().create(notification(0));
        const before = await repository().revision(GROUP);

        await repository().acknowledge(GROUP, created.id, acknowledgement);
        const after = await repository().revision(GROUP);
        await repository().acknowledge(GROUP, created.id, acknowledgement);

        expect(after).to.not.equal(before);
        expect(await repository().revision(GROUP)).to.equal(after);
      });

      it('when notifications are copied, then their severity and acknowledgement go with them', async () => {
        const created = await repository().create({ ...notification(0), severity: 'critical' });
        await repository().acknowledge(GROUP, created.id, acknowledgement);

        const [copy] = await repository().listCopies(GROUP);
        await repository().deleteByGroup(GROUP);
        await repository().addMissing(copy === undefined ? [] : [copy]);

        const [restored] = await repository().listOpen(GROUP);
        expect(restored).to.include({ severity: 'critical' });
        expect(restored?.acknowledged?.by).to.deep.equal(acknowledgement.by);
      });
    });

    describe('revision', () => {
      it('when a notification is created, imported, ignored or the group cleared, then the revision changes each time and other groups keep theirs', async () => {
        const other = await repository().revision('greenhouse-b');
        const seen = [await repository().revision(GROUP)];

        await repository().create(notification(0));
        seen.push(await repository().revision(GROUP));
        await repository().addMissing([{ ...notification(MINUTE), ignore: 'false' }]);
        seen.push(await repository().revision(GROUP));
        await repository().ignoreAt(GROUP, [at(0)]);
        seen.push(await repository().revision(GROUP));
        await repository().deleteByGroup(GROUP);
        seen.push(await repository().revision(GROUP));

        expect(new Set(seen).size).to.equal(seen.length);
        expect(await repository().revision('greenhouse-b')).to.equal(other);
      });

      it('when nothing is written, or a write matches nothing, then the revision stays', async () => {
        await repository().create(notification(0));
        const before = await repository().revision(GROUP);

        await repository().listOpen(GROUP);
        await repository().countOpen(GROUP);
        await repository().ignoreAt(GROUP, [at(5 * MINUTE)]);
        await repository().addMissing([{ ...notification(0), ignore: 'false' }]);
        await repository().deleteByGroup('greenhouse-b');

        expect(await repository().revision(GROUP)).to.equal(before);
      });
    });
  });
}
