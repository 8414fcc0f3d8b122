import {
  CreateAction,
  GetAction,
  GetActionsOfGroup,
  InvalidInputError,
  NotFoundError,
  ReplaceAutomations,
  SetActionValue,
  ConflictError,
} from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const GROUP = 'greenhouse-a';

describe('actions use cases', () => {
  let app: TestApp;

  beforeEach(async () => {
    app = createTestApp();
    for (const object of ['pump_1', 'led_1']) await app.get(CreateAction).execute({ group: GROUP, object });
  });

  describe('CreateAction', () => {
    it('when only group and object are given, then the action starts off without automations', async () => {
      const created = await app.get(CreateAction).execute({ group: GROUP, object: 'ventilator_1' });

      expect(created).to.include({ group: GROUP, object: 'ventilator_1', value: 'off' });
      expect(created.automations).to.deep.equal([]);
    });

    it('when the group already has that object, then it is a conflict', async () => {
      await expect(app.get(CreateAction).execute({ group: GROUP, object: 'pump_1' })).to.be.rejectedWith(
        ConflictError,
      );
    });
  });

  describe('SetActionValue (docs/api.md, Actions)', () => {
    it('when the action exists, then its value becomes the given value and is stored', async () => {
      const updated = await app
        .get(SetActionValue)
        .execute({ group: GROUP, object: 'pump_1', value: 'on', actor: { kind: 'cli' } });

      expect(updated.value).to.equal('on');
      expect((await app.get(GetAction).execute({ group: GROUP, object: 'pump_1' })).value).to.equal('on');
      expect((await app.get(GetAction).execute({ group: GROUP, object: 'led_1' })).value).to.equal('off');
    });

    it('when no action matches group and object, then it is not found with "no data found"', async () => {
      await expect(
        app
          .get(SetActionValue)
          .execute({ group: GROUP, object: 'fan_9', value: 'on', actor: { kind: 'cli' } }),
      )
        .to.be.rejectedWith(NotFoundError, /^no data found$/u)
        .and.eventually.have.property('resource', 'action');
      await expect(
        app
          .get(SetActionValue)
          .execute({ group: 'greenhouse-b', object: 'pump_1', value: 'on', actor: { kind: 'cli' } }),
      ).to.be.rejectedWith(NotFoundError);
    });

    it('when the query does not validate, then it is invalid input and nothing changes', async () => {
      for (const input of [
        { group: GROUP, object: 'pump_1', value: '' },
        { group: GROUP, object: 'pump_1', value: 'x'.repeat(65) },
        { group: GROUP, object: 'pump_1', value: ['on'] },
        { group: GROUP, object: '', value: 'on' },
        { group: { $ne: null }, object: 'pump_1', value: 'on' },
      ]) {
        await expect(
          app.get(SetActionValue).execute({ ...input, actor: { kind: 'cli' } }),
          JSON.stringify(input),
        ).to.be.rejectedWith(InvalidInputError);
      }
      expect((await app.get(GetAction).execute({ group: GROUP, object: 'pump_1' })).value).to.equal('off');
    });
  });

  describe('ReplaceAutomations', () => {
    const automations = [
      {
        _id: 'echoed',
        timeAutomations: [{ _id: 't', action: 'on', time: '06:30', frequency: 'every day' }],
        sensorAutomations: [{ action: 'off', sensor: 'humidity', condition: 'below', value: 40 }],
      },
    ];

    it('when the action exists, then the automations are replaced as a whole, echoed _ids dropped', async () => {
      const updated = await app
        .get(ReplaceAutomations)
        .execute({ group: GROUP, object: 'pump_1', automations });

      const expected = [
        {
          timeAutomations: [{ action: 'on', time: '06:30', frequency: 'every day' }],
          sensorAutomations: [{ action: 'off', sensor: 'humidity', condition: 'below', value: '40' }],
        },
      ];
      expect(updated.automations).to.deep.equal(expected);
      expect(
        (await app.get(GetAction).execute({ group: GROUP, object: 'pump_1' })).automations,
      ).to.deep.equal(expected);
    });

    it('when no action matches, then it is not found with "Action not found"', async () => {
      await expect(
        app.get(ReplaceAutomations).execute({ group: GROUP, object: 'fan_9', automations }),
      ).to.be.rejectedWith(NotFoundError, /^Action not found$/u);
    });

    it('when the automations are malformed, then it is invalid input and the stored ones are kept', async () => {
      await app.get(ReplaceAutomations).execute({ group: GROUP, object: 'pump_1', automations });

      await expect(
        app.get(ReplaceAutomations).execute({
          group: GROUP,
          object: 'pump_1',
          automations: [{ timeAutomations: [{ action: 'maybe', time: '06:30', frequency: 'every day' }] }],
        }),
      ).to.be.rejectedWith(InvalidInputError, 'automations[0].timeAutomations[0].action');
      expect(
        (await app.get(GetAction).execute({ group: GROUP, object: 'pump_1' })).automations,
      ).to.have.lengthOf(1);
    });
  });

  describe('GetAction and GetActionsOfGroup', () => {
    it('when the action exists, then the whole record is answered, names trimmed before matching', async () => {
      const found = await app.get(GetAction).execute({ group: ` ${GROUP} `, object: 'pump_1 ' });

      expect(found).to.include({ group: GROUP, object: 'pump_1', value: 'off' });
      expect(found.id).to.be.a('string');
    });

    it('when no action matches or the parameters are not strings, then it is not found with "Action not found"', async () => {
      for (const input of [
        { group: GROUP, object: 'fan_9' },
        { group: undefined, object: 'pump_1' },
        { group: { $ne: null }, object: { $ne: null } },
      ]) {
        await expect(app.get(GetAction).execute(input)).to.be.rejectedWith(
          NotFoundError,
          /^Action not found$/u,
        );
      }
    });

    it('when the actions of a group are read, then all are answered ordered by object name', async () => {
      const found = await app.get(GetActionsOfGroup).execute({ group: GROUP });

      expect(found.map((a) => a.object)).to.deep.equal(['led_1', 'pump_1']);
      expect(await app.get(GetActionsOfGroup).execute({ group: 'greenhouse-b' })).to.deep.equal([]);
    });
  });
});
