import {
  ANONYMOUS,
  ChangeUserEmail,
  CheckGroup,
  ConflictError,
  CreateDevice,
  CreateGroup,
  CreateUser,
  GetGroup,
  InvalidInputError,
  ListDevices,
  ListGroups,
  NotFoundError,
  UpdateGroupSettings,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

describe('group, user and device use cases', () => {
  let app: TestApp;

  beforeEach(() => {
    app = createTestApp();
  });

  describe('groups', () => {
    it('when settings are updated, then the group holds exactly the new value', async () => {
      await app.get(CreateGroup).execute({ name: 'greenhouse-a', settings: [{ tempMin: 10 }] });
      const settings = [{ tempMin: 15 }, { tempMax: 30 }, { emailNotification: true }];

      const updated = await app.get(UpdateGroupSettings).execute({ name: 'greenhouse-a', settings });

      expect(updated.settings).to.deep.equal(settings);
      expect((await app.get(GetGroup).execute({ name: 'greenhouse-a' })).settings).to.deep.equal(settings);
    });

    it('when settings that do not name the alert ranges, box deadlines and action limits replace them, then those are kept; named, they are replaced', async () => {
      const hortusOwn = [
        { actionLimits: { pump_1: { maxOnMs: 1_800_000 } } },
        { alertRanges: { 'esp/air/humidity': { min: 40, max: 80 } } },
        { boxAlerts: { '*': { noDataMs: 1_800_000 } } },
      ];
      await app.get(CreateGroup).execute({ name: 'greenhouse-a', settings: [{ tempMin: 10 }, ...hortusOwn] });

      const clientWrite = await app.get(UpdateGroupSettings).execute({
        name: 'greenhouse-a',
        settings: [{ tempMin: 15 }],
      });
      expect(clientWrite.settings).to.deep.equal([{ tempMin: 15 }, ...hortusOwn]);

      const named = await app.get(UpdateGroupSettings).execute({
        name: 'greenhouse-a',
        settings: { tempMin: 15, alertRanges: {} },
      });
      expect(named.settings).to.deep.equal({
        tempMin: 15,
        alertRanges: {},
        boxAlerts: { '*': { noDataMs: 1_800_000 } },
        actionLimits: { pump_1: { maxOnMs: 1_800_000 } },
      });
    });

    it('when the group does not exist, then update and read are not found with "Group not found"', async () => {
      await expect(
        app.get(UpdateGroupSettings).execute({ name: 'missing', settings: [] }),
      ).to.be.rejectedWith(NotFoundError, /^Group not found$/u);
      await expect(app.get(GetGroup).execute({ name: 'missing' })).to.be.rejectedWith(
        NotFoundError,
        /^Group not found$/u,
      );
    });

    it('when a name is checked, then it exists only for a created group; odd input is simply absent', async () => {
      await app.get(CreateGroup).execute({ name: 'greenhouse-a' });

      expect(await app.get(CheckGroup).execute({ name: 'greenhouse-a' })).to.equal(true);
      for (const name of ['greenhouse-b', '', undefined, { $ne: null }, ['greenhouse-a']]) {
        expect(await app.get(CheckGroup).execute({ name }), JSON.stringify(name)).to.equal(false);
      }
    });

    it('when two groups get the same name, then the second is a conflict and groups list by name', async () => {
      await app.get(CreateGroup).execute({ name: 'tomatoes' });
      await app.get(CreateGroup).execute({ name: 'basil', package: 'big' });

      await expect(app.get(CreateGroup).execute({ name: 'tomatoes' })).to.be.rejectedWith(ConflictError);
      expect((await app.get(ListGroups).execute()).map((g) => g.name)).to.deep.equal(['basil', 'tomatoes']);
    });
  });

  describe('users', () => {
    const ana = { firstName: 'Ana', lastName: 'Gardener', email: 'ana@example.com', group: 'greenhouse-a' };

    it('when the e-mail is changed, then the user has the new e-mail', async () => {
      const user = await app.get(CreateUser).execute(ana);

      const updated = await app
        .get(ChangeUserEmail)
        .execute({ userId: user.id, newEmail: ' ana@new.example ' }, ANONYMOUS);

      expect(updated).to.deep.equal({ ...user, email: 'ana@new.example' });
    });

    it('when the user is unknown or the id malformed, then it is not found with "User not found."', async () => {
      await app.get(CreateUser).execute(ana);

      for (const userId of ['ffffffffffffffffffffffff', 'nonsense', '', 42, 'x'.repeat(500)]) {
        await expect(
          app.get(ChangeUserEmail).execute({ userId, newEmail: 'new@example.com' }, ANONYMOUS),
          String(userId),
        ).to.be.rejectedWith(NotFoundError, /^User not found\.$/u);
      }
    });

    it('when the new e-mail is missing or invalid, then it is invalid input naming newEmail', async () => {
      const user = await app.get(CreateUser).execute(ana);

      for (const newEmail of [undefined, '', 'not-an-email', 'a@b']) {
        await expect(
          app.get(ChangeUserEmail).execute({ userId: user.id, newEmail }, ANONYMOUS),
          String(newEmail),
        ).to.be.rejectedWith(InvalidInputError, 'newEmail');
      }
    });

    it('when another user has the new e-mail, then it is a conflict', async () => {
      const user = await app.get(CreateUser).execute(ana);
      await app.get(CreateUser).execute({ ...ana, email: 'ben@example.com' });

      await expect(
        app.get(ChangeUserEmail).execute({ userId: user.id, newEmail: 'ben@example.com' }, ANONYMOUS),
      ).to.be.rejectedWith(ConflictError);
    });
  });

  describe('devices', () => {
    it('when devices are created, then the group lists them and a repeated deviceId is a conflict', async () => {
      await app.get(CreateDevice).execute({ deviceId: '24:6F:28:AA:00:02', group: 'g', type: 'relay-box' });
      await app.get(CreateDevice).execute({ deviceId: '24:6F:28:AA:00:01', group: 'g', type: 'sensor-box' });

      await expect(
        app.get(CreateDevice).execute({ deviceId: '24:6F:28:AA:00:01', group: 'h', type: 'sensor-box' }),
      ).to.be.rejectedWith(ConflictError);
      expect((await app.get(ListDevices).execute({ group: 'g' })).map((d) => d.deviceId)).to.deep.equal([
        '24:6F:28:AA:00:01',
        '24:6F:28:AA:00:02',
      ]);
    });

    it('when the deviceId holds characters other than letters, digits and : . _ -, then it is invalid input', async () => {
      await expect(
        app.get(CreateDevice).execute({ deviceId: 'a b', group: 'g', type: 'relay-box' }),
      ).to.be.rejectedWith(InvalidInputError, 'deviceId');
    });
  });
});
