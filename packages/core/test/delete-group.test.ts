import {
  ACCESS_KEY_REPOSITORY,
  type AccessKeyRepository,
  AUTOMATION_LOG_REPOSITORY,
  type AutomationLogRepository,
  ConflictError,
  CreateAction,
  CreateDevice,
  CreateGroup,
  CreateNotification,
  DeleteAction,
  DeleteDevice,
  DeleteGroup,
  GetActionsOfGroup,
  InvalidInputError,
  ListDevices,
  ListGroups,
  ListOpenNotifications,
  NotFoundError,
  READING_REPOSITORY,
  type ReadingRepository,
  RecordReadings,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

describe('deleting devices, actions and groups', () => {
  let app: TestApp;
  const keys = (): AccessKeyRepository => app.container.get<AccessKeyRepository>(ACCESS_KEY_REPOSITORY);
  const key = (name: string, kind: 'client' | 'device', groups: string[]): Promise<unknown> =>
    keys().create({ name, kind, groups, secretHash: name, createdAt: app.clock.now() });

  /** A group with some of everything, and a neighbour that must keep all of its own. */
  async function fill(group: string): Promise<void> {
    await app.get(CreateGroup).execute({ name: group, employee: ['ada'] });
    await app.get(CreateDevice).execute({ deviceId: `${group}:01`, group, type: 'box' });
    await app.get(CreateAction).execute({ group, object: 'pump_1' });
    await app.get(CreateNotification).execute({ group, message: 'too warm' });
    await app.get(RecordReadings).execute([
      { group, topic: 'esp/air/temperature', value: 21, time: '2024-06-15T08:00:00Z' },
      { group, topic: 'esp/air/pressure', value: 1012, time: '2024-06-15T08:00:00Z' },
    ]);
    await app.container.get<AutomationLogRepository>(AUTOMATION_LOG_REPOSITORY).record({
      group,
      object: 'pump_1',
      value: 'on',
      previousValue: 'off',
      at: app.clock.now(),
      trigger: 'time',
      rule: '06:30 every day -> on',
    });
  }

  beforeEach(async () => {
    app = createTestApp();
    await fill('doomed');
    await fill('kept');
  });

  it('when a group holding data is deleted without confirmation, then it is refused naming what it holds, and nothing changes', async () => {
    await expect(app.get(DeleteGroup).execute({ group: 'doomed' })).to.be.rejectedWith(
      ConflictError,
      /^Group doomed holds data \(topics: 2, devices: 1, actions: 1, notifications: 1, automationEvents: 1\); confirm/u,
    );
    expect(await app.get(ListDevices).execute({ group: 'doomed' })).to.have.length(1);
  });

  it('when a group is deleted with confirmation, then everything in it goes, the count is reported, and other groups keep theirs', async () => {
    await key('doomed box', 'device', ['doomed']);
    await key('doomed client', 'client', ['doomed']);
    await key('two groups', 'client', ['doomed', 'kept']);
    await key('kept box', 'device', ['kept']);

    const deleted = await app.get(DeleteGroup).execute({ group: 'doomed', confirm: true });

    expect(deleted).to.deep.equal({
      group: 'doomed',
      record: true,
      readings: 2,
      devices: 1,
      actions: 1,
      notifications: 1,
      automationEvents: 1,
      accessKeys: 2,
    });
    const readings = app.container.get<ReadingRepository>(READING_REPOSITORY);
    expect(await readings.countTopics('doomed')).to.equal(0);
    expect(await app.get(ListDevices).execute({ group: 'doomed' })).to.deep.equal([]);
    expect(await app.get(GetActionsOfGroup).execute({ group: 'doomed' })).to.deep.equal([]);
    expect(await app.get(ListOpenNotifications).execute({ group: 'doomed' })).to.deep.equal([]);
    expect((await app.get(ListGroups).execute()).map((g) => g.name)).to.deep.equal(['kept']);
    const revoked = (await keys().list()).filter((k) => k.revokedAt !== undefined).map((k) => k.name);
    expect(revoked).to.deep.equal(['doomed box', 'doomed client']);

    expect(await readings.countTopics('kept')).to.equal(2);
    expect(await app.get(ListDevices).execute({ group: 'kept' })).to.have.length(1);
    expect(await app.get(GetActionsOfGroup).execute({ group: 'kept' })).to.have.length(1);
  });

  it('when an empty group is deleted, then no confirmation is needed; an unknown group is not found', async () => {
    await app.get(CreateGroup).execute({ name: 'empty' });
    expect(await app.get(DeleteGroup).execute({ group: 'empty' })).to.include({ record: true, readings: 0 });
    await expect(app.get(DeleteGroup).execute({ group: 'empty' })).to.be.rejectedWith(
      NotFoundError,
      /^Group not found$/u,
    );
    await expect(app.get(DeleteGroup).execute({ group: '' })).to.be.rejectedWith(InvalidInputError);
  });

  it('when a device or an action is deleted, then only it goes; a second delete or another group is not found', async () => {
    await app.get(DeleteDevice).execute({ group: 'doomed', deviceId: 'doomed:01' });
    await app.get(DeleteAction).execute({ group: 'doomed', object: 'pump_1' });

    expect(await app.get(ListDevices).execute({ group: 'doomed' })).to.deep.equal([]);
    expect(await app.get(GetActionsOfGroup).execute({ group: 'doomed' })).to.deep.equal([]);
    await expect(
      app.get(DeleteDevice).execute({ group: 'doomed', deviceId: 'doomed:01' }),
    ).to.be.rejectedWith(NotFoundError, /^Group doomed has no device doomed:01$/u);
    await expect(app.get(DeleteDevice).execute({ group: 'doomed', deviceId: 'kept:01' })).to.be.rejectedWith(
      NotFoundError,
    );
    await expect(app.get(DeleteAction).execute({ group: 'doomed', object: 'pump_1' })).to.be.rejectedWith(
      NotFoundError,
      /^Group doomed has no action pump_1$/u,
    );
    await expect(app.get(DeleteDevice).execute({ group: 'doomed', deviceId: 'a b' })).to.be.rejectedWith(
      InvalidInputError,
    );
  });
});
