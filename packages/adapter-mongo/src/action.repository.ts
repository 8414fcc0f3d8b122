import { inject, injectable } from 'inversify';
import { ObjectId } from 'mongodb';
import {
  type Action,
  type ActionRepository,
  type AutomationSet,
  type Lockout,
  lockoutsPart,
  type NewAction,
  storedAutomations,
} from '@hortus/core';
import { StoredRevisions } from './revisions.js';
import { type CollectionSpec, copiedObjectId, MONGO_DATABASE, MongoRepository } from './support.js';
import { type MongoDatabase } from './database.js';

interface ActionDocument {
  _id: ObjectId;
  group: string;
  object: string;
  value: string;
  automations: AutomationSet[];
  /** Absent when the action has none (every document written before lockouts existed). */
  lockouts?: Lockout[];
}

export const actionCollection: CollectionSpec = {
  name: 'actions',
  indexes: [
    // (group, object) names one action; the group prefix serves listByGroup in object order.
    { key: { group: 1, object: 1 }, name: 'group_object_unique', unique: true },
  ],
};

const actionMapper = {
  toDocument(action: NewAction): ActionDocument {
    return {
      _id: new ObjectId(),
      group: action.group,
      object: action.object,
      value: action.value,
      automations: storedAutomations(action.automations),
      ...lockoutsPart(action.lockouts),
    };
  },
  toEntity(document: ActionDocument): Action {
    return {
      id: document._id.toHexString(),
      group: document.group,
      object: document.object,
      value: String(document.value),
      automations: storedAutomations(document.automations),
      ...lockoutsPart(document.lockouts),
    };
  },
};

@injectable()
export class MongoActionRepository extends MongoRepository<ActionDocument> implements ActionRepository {
  private readonly revisions: StoredRevisions;

  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, actionCollection, 'action', 'The group already has an action of that object name');
    this.revisions = new StoredRevisions(db, 'actions');
  }

  async create(action: NewAction): Promise<Action> {
    const document = actionMapper.toDocument(action);
    await this.run(() => this.collection.insertOne(document));
    await this.run(() => this.revisions.bump([document.group]));
    return actionMapper.toEntity(document);
  }

  async delete(group: string, object: string): Promise<boolean> {
    const result = await this.run(() => this.collection.deleteOne({ group, object }));
    if (result.deletedCount === 0) return false;
    await this.run(() => this.revisions.bump([group]));
    return true;
  }

  async deleteByGroup(group: string): Promise<number> {
    const { deletedCount } = await this.run(() => this.collection.deleteMany({ group }));
    if (deletedCount > 0) await this.run(() => this.revisions.bump([group]));
    return deletedCount;
  }

  /** An action of that group and object under another id (a forced copy) gives way to this one. */
  async restore(action: Action): Promise<void> {
    const _id = copiedObjectId(action.id);
    await this.run(() =>
      this.collection.deleteMany({ group: action.group, object: action.object, _id: { $ne: _id } }),
    );
    await this.run(() =>
      this.collection.replaceOne(
        { _id },
        {
          group: action.group,
          object: action.object,
          value: action.value,
          automations: storedAutomations(action.automations),
          ...lockoutsPart(action.lockouts),
        },
        { upsert: true },
      ),
    );
    await this.run(() => this.revisions.bump([action.group]));
  }

  async revision(group: string): Promise<string> {
    return this.run(() => this.revisions.current(group));
  }

  async groupRevisions(): Promise<Map<string, string>> {
    return this.run(async () => {
      const revisions = await this.revisions.all();
      // Actions copied in by a migration, or written before counters existed, answer '0' as revision() does.
      for (const group of await this.collection.distinct('group')) {
        if (typeof group === 'string' && !revisions.has(group)) revisions.set(group, '0');
      }
      return revisions;
    });
  }

  async find(group: string, object: string): Promise<Action | undefined> {
    const document = await this.run(() => this.collection.findOne({ group, object }));
    return document === null ? undefined : actionMapper.toEntity(document);
  }

  async listByGroup(group: string): Promise<Action[]> {
    const documents = await this.run(() => this.collection.find({ group }).sort({ object: 1 }).toArray());
    return documents.map(actionMapper.toEntity);
  }

  async setValue(group: string, object: string, value: string): Promise<Action | undefined> {
    return this.update(group, object, { value });
  }

  async setAutomations(
    group: string,
    object: string,
    automations: readonly AutomationSet[],
  ): Promise<Action | undefined> {
    return this.update(group, object, { automations: storedAutomations(automations) });
  }

  async setLockouts(
    group: string,
    object: string,
    lockouts: readonly Lockout[],
  ): Promise<Action | undefined> {
    const kept = lockoutsPart(lockouts).lockouts;
    // No lockouts: the field goes, so the document is as one written before lockouts existed.
    return kept === undefined
      ? this.update(group, object, {}, { lockouts: '' })
      : this.update(group, object, { lockouts: kept });
  }

  private async update(
    group: string,
    object: string,
    fields: Partial<Pick<ActionDocument, 'value' | 'automations' | 'lockouts'>>,
    unset?: { lockouts: '' },
  ): Promise<Action | undefined> {
    const change = unset === undefined ? { $set: fields } : { $unset: unset };
    const document = await this.run(() =>
      this.collection.findOneAndUpdate({ group, object }, change, { returnDocument: 'after' }),
    );
    if (document === null) return undefined;
    await this.run(() => this.revisions.bump([group]));
    return actionMapper.toEntity(document);
  }
}
