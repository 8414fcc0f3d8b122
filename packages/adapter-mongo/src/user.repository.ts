import { inject, injectable } from 'inversify';
import { type Db, ObjectId } from 'mongodb';
import { type NewUser, type User, type UserRepository } from '@hortus/core';
import { type CollectionSpec, MONGO_DB, MongoRepository, toObjectId } from './support.js';

/** Records written before Hortus may hold more (a password hash); the mapper reads only these. */
interface UserDocument {
  _id: ObjectId;
  firstName: string;
  lastName: string;
  email: string;
  group: string;
}

export const userCollection: CollectionSpec = {
  name: 'users',
  indexes: [{ key: { email: 1 }, name: 'email_unique', unique: true }],
};

/** Never fetch more than the public fields (FerretDB v1 has no projection on findAndModify). */
const publicFields = { firstName: 1, lastName: 1, email: 1, group: 1 } as const;

const userMapper = {
  toDocument(user: NewUser): UserDocument {
    return {
      _id: new ObjectId(),
      firstName: user.firstName,
      lastName: user.lastName,
      email: user.email,
      group: user.group,
    };
  },
  toEntity(document: UserDocument): User {
    return {
      id: document._id.toHexString(),
      firstName: String(document.firstName ?? ''),
      lastName: String(document.lastName ?? ''),
      email: String(document.email ?? ''),
      group: String(document.group ?? ''),
    };
  },
};

@injectable()
export class MongoUserRepository extends MongoRepository<UserDocument> implements UserRepository {
  constructor(@inject(MONGO_DB) db: Db) {
    super(db, userCollection, 'user', 'Another user has that e-mail');
  }

  async create(user: NewUser): Promise<User> {
    const document = userMapper.toDocument(user);
    await this.run(() => this.collection.insertOne(document));
    return userMapper.toEntity(document);
  }

  async findById(id: string): Promise<User | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    const document = await this.run(() => this.collection.findOne({ _id }, { projection: publicFields }));
    return document === null ? undefined : userMapper.toEntity(document);
  }

  async changeEmail(id: string, email: string): Promise<User | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    const document = await this.run(() =>
      this.collection.findOneAndUpdate({ _id }, { $set: { email } }, { returnDocument: 'after' }),
    );
    return document === null ? undefined : userMapper.toEntity(document);
  }
}
