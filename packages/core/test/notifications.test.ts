import {
  CreateNotification,
  IgnoreNotifications,
  InvalidInputError,
  ListOpenNotifications,
  NotFoundError,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const GROUP = 'greenhouse-a';
const T1 = '2024-06-15T06:00:00.000Z';
const T2 = '2024-06-15T07:00:00.000Z';
const UNKNOWN = '2024-06-15T09:00:00.000Z';

describe('notifications use cases', () => {
  let app: TestApp;
  const openMessages = async (group = GROUP): Promise<string[]> =>
    (await app.get(ListOpenNotifications).execute({ group })).map((n) => n.message);

  beforeEach(async () => {
    app = createTestApp();
    const create = app.get(CreateNotification);
    await create.execute({ group: GROUP, time: T1, message: 'first at T1' });
    await create.execute({ group: GROUP, time: T1, message: 'second at T1' });
    await create.execute({ group: GROUP, time: T2, message: 'at T2' });
    await create.execute({ group: 'greenhouse-b', time: T1, message: 'other group at T1' });
  });

  describe('IgnoreNotifications (docs/api.md, Notifications)', () => {
    it('when times are given, then every notification of the group at one of them is ignored', async () => {
      const matched = await app.get(IgnoreNotifications).execute({ group: GROUP, times: [T1, UNKNOWN] });

      expect(matched).to.equal(2);
      expect(await openMessages()).to.deep.equal(['at T2']);
      expect(await openMessages('greenhouse-b')).to.deep.equal(['other group at T1']);
    });

    it('when no notification matches the times, then it is no error and nothing changes', async () => {
      expect(await app.get(IgnoreNotifications).execute({ group: GROUP, times: [UNKNOWN] })).to.equal(0);
      expect(await app.get(IgnoreNotifications).execute({ group: 'no-such-group', times: [T1] })).to.equal(0);
      expect(await openMessages()).to.have.lengthOf(3);
    });

    it('when times is an empty list, then nothing is ignored, even if time is also given', async () => {
      expect(await app.get(IgnoreNotifications).execute({ group: GROUP, times: [], time: T1 })).to.equal(0);
      expect(await openMessages()).to.have.lengthOf(3);
    });

    it('when both times and time are given, then only times counts', async () => {
      await app.get(IgnoreNotifications).execute({ group: GROUP, times: [T2], time: T1 });

      expect(await openMessages()).to.deep.equal(['second at T1', 'first at T1']);
    });

    it('when only time is given and notifications of the group have it, then they are ignored', async () => {
      expect(await app.get(IgnoreNotifications).execute({ group: GROUP, time: T2 })).to.equal(1);
      expect(await openMessages()).to.deep.equal(['second at T1', 'first at T1']);
    });

    it('when only time is given and no notification of the group has it, then it is not found', async () => {
      await expect(app.get(IgnoreNotifications).execute({ group: GROUP, time: UNKNOWN }))
        .to.be.rejectedWith(NotFoundError, 'Notification not found')
        .and.eventually.have.property('resource', 'notification');
      await expect(
        app.get(IgnoreNotifications).execute({ group: 'greenhouse-c', time: T1 }),
      ).to.be.rejectedWith(NotFoundError);
    });

    it('when the matching notification was ignored before, then ignoring it by time again succeeds', async () => {
      await app.get(IgnoreNotifications).execute({ group: GROUP, time: T2 });

      expect(await app.get(IgnoreNotifications).execute({ group: GROUP, time: T2 })).to.equal(1);
    });

    it('when neither time nor times is given, then it is invalid input "No time or times provided"', async () => {
      for (const input of [{ group: GROUP }, { group: GROUP, time: null, times: null }]) {
        await expect(app.get(IgnoreNotifications).execute(input)).to.be.rejectedWith(
          InvalidInputError,
          /^No time or times provided$/u,
        );
      }
    });

    it('when one of the times is not a date-time, then it is invalid input and nothing is ignored', async () => {
      await expect(
        app.get(IgnoreNotifications).execute({ group: GROUP, times: [T1, 'yesterday'] }),
      ).to.be.rejectedWith(InvalidInputError, 'times[1]');
      await expect(app.get(IgnoreNotifications).execute({ group: GROUP, times: T1 })).to.be.rejectedWith(
        InvalidInputError,
      );
      expect(await openMessages()).to.have.lengthOf(3);
    });

    it('when the group is missing, then it is invalid input', async () => {
      await expect(app.get(IgnoreNotifications).execute({ group: '', time: T1 })).to.be.rejectedWith(
        InvalidInputError,
        'groupId',
      );
    });
  });

  describe('ListOpenNotifications and CreateNotification', () => {
    it('when notifications are listed, then the newest created comes first', async () => {
      expect(await openMessages()).to.deep.equal(['at T2', 'second at T1', 'first at T1']);
    });

    it('when a notification is created without a time, then it gets the clock time', async () => {
      const created = await app
        .get(CreateNotification)
        .execute({ group: GROUP, message: 'now', value: '29.5' });

      expect(created.time.toISOString()).to.equal(app.clock.now().toISOString());
      expect(created).to.include({ ignore: 'false', value: 29.5 });
    });
  });
});
