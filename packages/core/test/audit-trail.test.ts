import {
  ACCESS_KEY_SECRETS,
  type AccessKeySecrets,
  CreateAccessKey,
  CreateGroup,
  CreateUser,
  DeleteGroup,
  ListAuditTrail,
  RevokeAccessKey,
  SetTopicAlert,
  UpdateGroupSettings,
} from '@hortus/core';
import { createTestApp, expect } from './support.js';

describe('audit trail', () => {
  it('when configuration changes through the use cases, then each change is recorded with who, what, before, after and when, newest first', async () => {
    const app = createTestApp({ now: '2026-06-10T12:00:00Z' });
    const root = { kind: 'cli' as const, id: 'root' };
    await app.get(CreateGroup).execute({ name: 'gh', settings: [{ tempMax: 30 }], actor: root });
    const user = await app.get(CreateUser).execute({
      firstName: 'Ada',
      lastName: 'Admin',
      email: 'ada@example.org',
      group: 'gh',
      actor: root,
    });
    app.clock.advance(60_000);
    await app
      .get(UpdateGroupSettings)
      .execute({ name: 'gh', settings: [{ tempMax: 32 }], actor: { kind: 'user', id: user.id } });
    await app.get(SetTopicAlert).execute({ group: 'gh', topic: 'esp/air/co2', max: 1500, actor: root });

    const trail = await app.get(ListAuditTrail).execute({ group: 'gh' });

    expect(trail.map((e) => e.action)).to.deep.equal([
      'alert.range',
      'group.settings',
      'user.create',
      'group.create',
    ]);
    const [range, settings] = trail;
    expect(range).to.deep.include({ target: 'esp/air/co2', before: null, after: { max: 1500 }, actor: root });
    expect(settings?.actor).to.deep.equal({ kind: 'user', id: user.id, name: 'ada@example.org' });
    expect(settings?.before).to.deep.equal([{ tempMax: 30 }]);
    expect(settings?.after).to.deep.equal([{ tempMax: 32 }]);
    expect(settings?.at.toISOString()).to.equal('2026-06-10T12:01:00.000Z');
    expect(await app.get(ListAuditTrail).execute({ since: '2026-06-10T12:00:30Z' })).to.have.lengthOf(2);
  });

  it('when a key is created and revoked, then the trail holds neither its secret nor its hash', async () => {
    const app = createTestApp({ now: '2026-06-10T12:00:00Z' });
    app.container.bind<AccessKeySecrets>(ACCESS_KEY_SECRETS).toConstantValue({
      generate: () => 'hk_the-secret',
      hash: (secret) => `digest(${secret})`,
    });
    const { key, secret } = await app
      .get(CreateAccessKey)
      .execute({ name: 'ops', kind: 'admin', actor: { kind: 'cli', id: 'root' } });
    await app.get(RevokeAccessKey).execute({ id: key.id, actor: { kind: 'key', id: 'k-admin' } });

    const trail = await app.get(ListAuditTrail).execute({});

    expect(trail.map((e) => [e.action, e.target, e.actor.kind])).to.deep.equal([
      ['key.revoke', key.id, 'key'],
      ['key.create', key.id, 'cli'],
    ]);
    expect(JSON.stringify(trail)).to.not.include(secret);
    expect(JSON.stringify(trail)).to.not.include('digest(');
  });

  it('when a change changes nothing, or a door names no actor, then nothing is recorded, or the actor is anonymous', async () => {
    const app = createTestApp();
    await app.get(CreateGroup).execute({ name: 'gh', settings: [{ tempMax: 30 }] });
    await app.get(UpdateGroupSettings).execute({ name: 'gh', settings: [{ tempMax: 30 }] });
    await app.get(DeleteGroup).execute({ group: 'gh' });

    const trail = await app.get(ListAuditTrail).execute({});

    expect(trail.map((e) => [e.action, e.actor.kind])).to.deep.equal([
      ['group.delete', 'anonymous'],
      ['group.create', 'anonymous'],
    ]);
  });

  it('when the limit or the time is not valid, then it is refused', async () => {
    const app = createTestApp();
    await expect(app.get(ListAuditTrail).execute({ limit: '0' })).to.be.rejectedWith(/limit/);
    await expect(app.get(ListAuditTrail).execute({ since: 'yesterday' })).to.be.rejectedWith(/since/);
  });
});
