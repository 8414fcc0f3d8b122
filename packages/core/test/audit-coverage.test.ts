import {
  type Actor,
  AddActionLockout,
  AdvanceStages,
  ApproveDeviceMove,
  type AuditEntry,
  AssignStage,
  ChangeUserEmail,
  ClearStage,
  CreateAction,
  CreateDevice,
  CreateGroup,
  CreateUser,
  DeleteAction,
  DEVICE_REPOSITORY,
  type DeviceRepository,
  FIRMWARE_DIGEST,
  type FirmwareDigest,
  InviteUser,
  ListAuditTrail,
  MAILER,
  type Mailer,
  OPERATOR,
  PublishFirmware,
  RemoveActionLockout,
  RequestPasswordReset,
  RevokeSessions,
  SetActionLimit,
  SetActionSafety,
  SetGroupMetrics,
  SetGroupRetention,
  SetPassword,
  SignUp,
  WithdrawFirmware,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const admin: Actor = { kind: 'key', id: 'k-admin' };
const root: Actor = { kind: 'cli', id: 'root' };

/** The one entry of this action (on this target) in the trail; fails when there is none or more than one. */
async function onlyEntry(app: TestApp, action: string, target?: string): Promise<AuditEntry> {
  const entries = (await app.get(ListAuditTrail).execute({})).filter(
    (entry) => entry.action === action && (target === undefined || entry.target === target),
  );
  expect(entries, action).to.have.lengthOf(1);
  return entries[0] as AuditEntry;
}

async function appWithGroup(): Promise<TestApp> {
  const app = createTestApp({ now: '2026-06-10T12:00:00Z' });
  await app.get(CreateGroup).execute({ name: 'gh', settings: [{ tempMax: 30 }] });
  return app;
}

describe('audit trail: every change of configuration', () => {
  it('when an action is created, limited, made safe, locked out and deleted, then each change is one entry with its actor, before and after', async () => {
    const app = await appWithGroup();
    await app.get(CreateAction).execute({ group: 'gh', object: 'pump_1', actor: root });
    await app.get(CreateAction).execute({ group: 'gh', object: 'ventilator_1', actor: root });
    await app.get(SetActionLimit).execute({ group: 'gh', object: 'pump_1', maxOnMs: 600_000, actor: admin });
    await app
      .get(SetActionSafety)
      .execute({ group: 'gh', object: 'pump_1', safe: 'off', staleAfterMs: 900_000, actor: admin });
    const [lockout] = await app.get(AddActionLockout).execute({
      group: 'gh',
      object: 'pump_1',
      lockout: { while: 'ventilator_1', is: 'on' },
      actor: admin,
    });
    await app
      .get(RemoveActionLockout)
      .execute({ group: 'gh', object: 'pump_1', id: lockout?.id, actor: root });
    await app.get(DeleteAction).execute({ group: 'gh', object: 'pump_1', actor: root });

    const created = await onlyEntry(app, 'action.create', 'pump_1');
    expect(created).to.deep.include({ target: 'pump_1', group: 'gh', actor: root });
    expect(created.before).to.equal(undefined);
    expect(created.after).to.deep.equal({ value: 'off', automations: [] });
    expect(await onlyEntry(app, 'action.limit')).to.deep.include({
      actor: admin,
      before: null,
      after: { maxOnMs: 600_000 },
    });
    expect(await onlyEntry(app, 'action.safety')).to.deep.include({
      target: 'pump_1',
      actor: admin,
      before: {},
      after: { safe: 'off', staleAfterMs: 900_000 },
    });
    const added = await onlyEntry(app, 'action.lockout.add');
    expect(added).to.deep.include({ target: 'pump_1', group: 'gh', actor: admin, before: [] });
    expect(added.after).to.deep.equal([{ id: 1, while: 'ventilator_1', is: 'on' }]);
    const removed = await onlyEntry(app, 'action.lockout.remove');
    expect(removed).to.deep.include({ actor: root, after: [] });
    expect(removed.before).to.deep.equal(added.after);
    const deleted = await onlyEntry(app, 'action.delete');
    expect(deleted).to.deep.include({
      target: 'pump_1',
      actor: root,
      before: { value: 'off', automations: [] },
    });
    expect(deleted.after).to.equal(undefined);
  });

  it('when a lockout already held is added again, then nothing is recorded', async () => {
    const app = await appWithGroup();
    await app.get(CreateAction).execute({ group: 'gh', object: 'pump_1' });
    const lockout = { sensor: 'temperature', below: 2 };
    await app.get(AddActionLockout).execute({ group: 'gh', object: 'pump_1', lockout, actor: admin });
    await app.get(AddActionLockout).execute({ group: 'gh', object: 'pump_1', lockout, actor: admin });

    await onlyEntry(app, 'action.lockout.add');
  });

  it('when a change fails (bad input, nothing to change, someone unknown), then nothing is recorded', async () => {
    const app = await appWithGroup();
    app.container.bind<Mailer>(MAILER).toConstantValue({ send: () => Promise.resolve() });
    await app.get(CreateAction).execute({ group: 'gh', object: 'pump_1' });
    const entriesBefore = (await app.get(ListAuditTrail).execute({})).length;
    const failures: [string, Promise<unknown>][] = [
      [
        'a lockout on an action that does not exist',
        app.get(AddActionLockout).execute({
          group: 'gh',
          object: 'pump_1',
          lockout: { while: 'heater_9', is: 'on' },
          actor: admin,
        }),
      ],
      [
        'removing a lockout it has not',
        app.get(RemoveActionLockout).execute({ group: 'gh', object: 'pump_1', id: 7, actor: admin }),
      ],
      [
        'deleting an unknown action',
        app.get(DeleteAction).execute({ group: 'gh', object: 'fan_9', actor: admin }),
      ],
      [
        'a limit out of range',
        app.get(SetActionLimit).execute({ group: 'gh', object: 'pump_1', maxOnMs: -1, actor: admin }),
      ],
      ['an unknown group', app.get(SetGroupRetention).execute({ group: 'nowhere', days: 30, actor: admin })],
      ['firmware never published', app.get(WithdrawFirmware).execute({ version: '9.9.9', actor: admin })],
      [
        'an unknown user',
        app
          .get(SetPassword)
          .execute({ email: 'nobody@example.org', password: 'a rather good passphrase', actor: root }),
      ],
      ['an unknown user', app.get(RevokeSessions).execute({ email: 'nobody@example.org', actor: root })],
      [
        'an unknown user',
        app.get(RequestPasswordReset).linkFor({ email: 'nobody@example.org', actor: admin }),
      ],
      [
        'an unknown group',
        app.get(InviteUser).execute({ email: 'eve@example.org', group: 'nowhere', actor: admin }),
      ],
    ];
    for (const [what, change] of failures) {
      const outcome = await change.then(
        () => 'done',
        (error: unknown) => (error instanceof Error ? error.name : 'failed'),
      );
      expect(outcome, what).to.not.equal('done');
    }
    expect(await app.get(ListAuditTrail).execute({})).to.have.lengthOf(entriesBefore);
  });

  it('when a device is registered and its refused move approved, then both are recorded with who did it', async () => {
    const app = await appWithGroup();
    await app
      .get(CreateDevice)
      .execute({ deviceId: '24:6F:28:AA:00:01', group: 'gh', type: 'box', actor: admin });
    const devices = app.container.get<DeviceRepository>(DEVICE_REPOSITORY);
    await devices.update('24:6F:28:AA:00:01', {
      locked: true,
      moveRequest: { at: app.clock.now(), address: '192.0.2.7', from: '192.0.2.1' },
    });
    await app.get(ApproveDeviceMove).execute({ id: '24:6F:28:AA:00:01', actor: root });

    expect(await onlyEntry(app, 'device.create')).to.deep.include({
      target: '24:6F:28:AA:00:01',
      group: 'gh',
      actor: admin,
      after: { group: 'gh', type: 'box' },
    });
    expect(await onlyEntry(app, 'device.approve-move')).to.deep.include({
      actor: root,
      before: { address: '192.0.2.7', from: '192.0.2.1', approved: false },
      after: { address: '192.0.2.7', from: '192.0.2.1', approved: true },
    });
  });

  it("when a group's retention, derived series and stage change, then each is recorded with before and after; a stage moved by date names the engine", async () => {
    const app = await appWithGroup();
    await app.get(SetGroupRetention).execute({ group: 'gh', days: '30', actor: admin });
    await app.get(SetGroupMetrics).execute({ group: 'gh', vpd: true, actor: admin });
    const recipe = {
      name: 'test crop',
      stages: [
        { name: 'seedling', days: 10, temperature: { min: 18, max: 24 } },
        { name: 'growth', days: 20 },
      ],
    };
    await app.get(AssignStage).execute({ group: 'gh', recipe, actor: root });
    app.clock.advance(11 * 86_400_000);
    await app.get(AdvanceStages).execute(app.clock.now());
    await app.get(ClearStage).execute({ group: 'gh', actor: admin });

    expect(await onlyEntry(app, 'group.retention')).to.deep.include({
      target: 'gh',
      actor: admin,
      before: { retentionDays: null },
      after: { retentionDays: 30 },
    });
    const metrics = await onlyEntry(app, 'group.metrics');
    expect(metrics.before).to.deep.include({ vpd: false });
    expect(metrics.after).to.deep.include({ vpd: true });
    const stages = (await app.get(ListAuditTrail).execute({ group: 'gh' })).filter(
      (entry) => entry.action === 'group.stage',
    );
    expect(stages.map((entry) => [entry.actor, entry.before, entry.after])).to.deep.equal([
      [admin, { recipe: 'test crop', stage: 'growth', startedAt: '2026-06-20T12:00:00.000Z' }, null],
      [
        { kind: 'engine', id: 'stage' },
        { recipe: 'test crop', stage: 'seedling', startedAt: '2026-06-10T12:00:00.000Z' },
        {
          recipe: 'test crop',
          stage: 'growth',
          startedAt: '2026-06-20T12:00:00.000Z',
          ranges: [],
          rulesUpdated: 0,
          rulesAdded: 0,
        },
      ],
      [
        root,
        null,
        {
          recipe: 'test crop',
          stage: 'seedling',
          startedAt: '2026-06-10T12:00:00.000Z',
          ranges: [{ topic: 'esp/air/temperature', min: 18, max: 24 }],
          rulesUpdated: 0,
          rulesAdded: 0,
        },
      ],
    ]);
  });

  it('when a user is invited, given a reset link or a password, has sessions ended or the e-mail changed, then each is recorded and no secret is', async () => {
    const app = await appWithGroup();
    const mail: Mailer = { send: () => Promise.resolve() };
    app.container.bind<Mailer>(MAILER).toConstantValue(mail);
    await app
      .get(CreateUser)
      .execute({ firstName: 'Ada', lastName: 'Grower', email: 'ada@example.org', group: 'gh' });
    const { code } = await app
      .get(InviteUser)
      .execute({ email: 'ben@example.org', group: 'gh', actor: admin });
    const { link } = await app.get(RequestPasswordReset).linkFor({ email: 'ada@example.org', actor: admin });
    const password = 'a rather good passphrase';
    await app.get(SetPassword).execute({ email: 'ada@example.org', password, actor: root });
    await app.get(RevokeSessions).execute({ email: 'ada@example.org', actor: root });
    const ada = await app
      .get(ChangeUserEmail)
      .byEmail({ email: 'ada@example.org', newEmail: 'ada@example.net', actor: root }, OPERATOR);

    expect(await onlyEntry(app, 'user.invite')).to.deep.include({
      target: 'ben@example.org',
      group: 'gh',
      actor: admin,
      after: { email: 'ben@example.org', group: 'gh' },
    });
    expect(await onlyEntry(app, 'user.reset-link')).to.deep.include({
      target: 'ada@example.org',
      actor: admin,
      after: { expiresAt: '2026-06-10T13:00:00.000Z' },
    });
    expect(await onlyEntry(app, 'user.password')).to.deep.include({ target: 'ada@example.org', actor: root });
    expect(await onlyEntry(app, 'user.sessions-revoke')).to.deep.include({ actor: root });
    expect(await onlyEntry(app, 'user.email')).to.deep.include({
      target: ada.id,
      actor: root,
      before: { email: 'ada@example.org' },
      after: { email: 'ada@example.net' },
    });
    const trail = JSON.stringify(await app.get(ListAuditTrail).execute({}));
    expect(trail).to.not.include(code);
    expect(trail).to.not.include(link);
    expect(trail).to.not.include(link.split(/[=/]/u).pop());
    expect(trail).to.not.include(password);
  });

  it('when someone signs up, then the new user is recorded, by themselves or by the admin who signed them up', async () => {
    const app = await appWithGroup();
    const person = {
      firstName: 'Ada',
      lastName: 'Grower',
      password: 'a rather good passphrase',
      group: 'gh',
    };
    const ada = await app
      .get(SignUp)
      .execute(
        { ...person, email: 'ada@example.org' },
        { caller: { kind: 'anonymous' }, accessRequired: false },
      );
    await app
      .get(SignUp)
      .execute({ ...person, email: 'ben@example.org' }, { caller: OPERATOR, accessRequired: true });

    expect(await onlyEntry(app, 'user.create', 'ada@example.org')).to.deep.include({
      group: 'gh',
      actor: { kind: 'user', id: ada.id, name: 'ada@example.org' },
      after: { email: 'ada@example.org', group: 'gh', role: ada.role, origin: 'signup' },
    });
    expect((await onlyEntry(app, 'user.create', 'ben@example.org')).actor).to.deep.equal({ kind: 'cli' });
  });

  it('when an e-mail is changed over HTTP with no actor given, then the caller is the actor', async () => {
    const app = await appWithGroup();
    const ada = await app
      .get(CreateUser)
      .execute({ firstName: 'Ada', lastName: 'Grower', email: 'ada@example.org', group: 'gh' });
    await app.get(ChangeUserEmail).execute({ userId: ada.id, newEmail: 'ada@example.net' }, OPERATOR);

    expect((await onlyEntry(app, 'user.email')).actor).to.deep.equal({ kind: 'cli' });
  });

  it('when firmware is published and withdrawn, then both are recorded', async () => {
    const app = await appWithGroup();
    app.container.bind<FirmwareDigest>(FIRMWARE_DIGEST).toConstantValue(() => 'ab'.repeat(32));
    await app
      .get(PublishFirmware)
      .execute({ data: new Uint8Array(1024), version: '1.2.3', group: 'gh', actor: root });
    await app.get(WithdrawFirmware).execute({ version: '1.2.3', group: 'gh', actor: admin });

    expect(await onlyEntry(app, 'firmware.publish')).to.deep.include({
      target: '1.2.3',
      group: 'gh',
      actor: root,
      after: {
        version: '1.2.3',
        group: 'gh',
        size: 1024,
        sha256: 'ab'.repeat(32),
        publishedAt: '2026-06-10T12:00:00.000Z',
      },
    });
    expect(await onlyEntry(app, 'firmware.withdraw')).to.deep.include({
      actor: admin,
      before: { version: '1.2.3', group: 'gh' },
    });
  });
});
