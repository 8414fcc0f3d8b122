import { inject, injectable } from 'inversify';
import { type Collection, type Document, ObjectId } from 'mongodb';
import {
  emailKey,
  storedEmailKey,
  type ImportedUser,
  type NewUser,
  type PasswordResetChange,
  type User,
  type UserCredentials,
  userOrigins,
  type UserProvenance,
  type UserRecord,
  type UserCopy,
  type UserRepository,
  type UserRole,
  storedUserRole,
} from '@hortus/core';
import {
  type CollectionSpec,
  isDuplicateKeyError,
  MONGO_DATABASE,
  MongoRepository,
  toDate,
  toObjectId,
  copiedObjectId,
} from './support.js';
import { type MongoDatabase } from './database.js';

/**
 * `password` is the bcrypt hash, under the name the original service gave it, so its users log in with
 * the password they had. `emailKey` is the e-mail in lower case: the unique key e-mails are matched by.
 */
interface UserDocument {
  _id: ObjectId;
  firstName: string;
  lastName: string;
  email: string;
  emailKey: string;
  group: string;
  /** Absent (records of the original service, and older ones): an operator. */
  role?: string;
  password?: string;
  sessionVersion?: number;
  resetToken?: { digest: string; expiresAt: Date };
  /** How and when the account was made; absent on records written before (see list). */
  createdAt?: Date;
  origin?: string;
}

/** Records of the original service have no emailKey: it is filled in before the unique index is made. */
export async function addEmailKeys(collection: Collection<Document>): Promise<void> {
  const missing = collection.find({ emailKey: { $exists: false } }, { projection: { email: 1 } });
  for await (const document of missing) {
    const email: unknown = document['email'];
    if (typeof email !== 'string') continue;
    await collection.updateOne({ _id: document._id }, { $set: { emailKey: emailKey(email) } });
  }
}

/** A reset token that has been used, by its digest: the unique `_id` lets exactly one use through. */
interface UsedResetDocument {
  _id: string;
  expiresAt: Date;
}

export const usedResetCollection: CollectionSpec = { name: 'usedresettokens', indexes: [] };

/** An invitation a sign-up has used, by its id (VerifiedInvitation.id), kept until it expires. */
export const usedInvitationCollection: CollectionSpec = { name: 'usedinvitations', indexes: [] };

export const userCollection: CollectionSpec = {
  name: 'users',
  indexes: [
    { key: { email: 1 }, name: 'email_unique', unique: true },
    { key: { emailKey: 1 }, name: 'emailKey_unique', unique: true },
  ],
};

/** Never fetch more than the public fields (FerretDB v1 has no projection on findAndModify). */
const publicFields = { firstName: 1, lastName: 1, email: 1, group: 1, role: 1 } as const;
const credentialFields = { password: 1, sessionVersion: 1, resetToken: 1 } as const;

const userMapper = {
  toDocument(user: NewUser, passwordHash?: string, provenance?: UserProvenance): UserDocument {
    return {
      _id: new ObjectId(),
      firstName: user.firstName,
      lastName: user.lastName,
      email: user.email,
      emailKey: emailKey(user.email),
      group: user.group,
      ...(user.role === undefined ? {} : { role: user.role }),
      sessionVersion: 0,
      ...(passwordHash === undefined ? {} : { password: passwordHash }),
      ...(provenance === undefined ? {} : { createdAt: provenance.createdAt, origin: provenance.origin }),
    };
  },
  /**
   * A record without a creation time (written before it was kept, or by the original service) is
   * listed with the time in its ObjectId, which is when it was first stored; its origin stays unknown.
   */
  toRecord(document: UserDocument): UserRecord {
    const origin = userOrigins.find((known) => known === document.origin);
    return {
      ...userMapper.toEntity(document),
      createdAt: document.createdAt === undefined ? document._id.getTimestamp() : toDate(document.createdAt),
      origin: origin ?? 'unknown',
    };
  },
  toEntity(document: UserDocument): User {
    return {
      id: document._id.toHexString(),
      firstName: String(document.firstName ?? ''),
      lastName: String(document.lastName ?? ''),
      email: String(document.email ?? ''),
      group: String(document.group ?? ''),
      role: storedUserRole(document.role),
    };
  },
  toCredentials(document: Partial<UserDocument>): UserCredentials {
    const reset = document.resetToken;
    return {
      sessionVersion: typeof document.sessionVersion === 'number' ? document.sessionVersion : 0,
      ...(typeof document.password === 'string' ? { passwordHash: document.password } : {}),
      ...(reset !== undefined && typeof reset.digest === 'string'
        ? { reset: { tokenDigest: reset.digest, expiresAt: toDate(reset.expiresAt) } }
        : {}),
    };
  },
};

@injectable()
export class MongoUserRepository extends MongoRepository<UserDocument> implements UserRepository {
  private readonly usedResets: Collection<UsedResetDocument>;
  private readonly usedInvitations: Collection<UsedResetDocument>;

  constructor(@inject(MONGO_DATABASE) db: MongoDatabase) {
    super(db, userCollection, 'user', 'Another user has that e-mail');
    this.usedResets = db.collection<UsedResetDocument>(usedResetCollection.name);
    this.usedInvitations = db.collection<UsedResetDocument>(usedInvitationCollection.name);
  }

  async create(
    user: NewUser,
    options: { readonly passwordHash?: string; readonly provenance?: UserProvenance } = {},
  ): Promise<User> {
    const document = userMapper.toDocument(user, options.passwordHash, options.provenance);
    await this.run(() => this.collection.insertOne(document));
    return userMapper.toEntity(document);
  }

  /** Keeps the original's ObjectId when it is free, so ids clients and chart records hold stay valid. */
  async createImported(user: ImportedUser): Promise<User> {
    const { id, passwordHash, caseSensitiveEmail, createdAt, ...fields } = user;
    const wanted = id === undefined ? undefined : toObjectId(id);
    const free =
      wanted !== undefined &&
      (await this.run(() => this.collection.findOne({ _id: wanted }, { projection: { _id: 1 } }))) === null;
    const document: UserDocument = {
      ...userMapper.toDocument(fields, passwordHash, {
        origin: 'migration',
        createdAt: createdAt ?? new Date(),
      }),
      ...(free ? { _id: wanted } : {}),
      emailKey: storedEmailKey(fields.email, caseSensitiveEmail),
    };
    await this.run(() => this.collection.insertOne(document));
    return userMapper.toEntity(document);
  }

  async list(): Promise<UserRecord[]> {
    const documents = await this.run(() =>
      this.collection
        .find({}, { projection: { ...publicFields, createdAt: 1, origin: 1 } })
        .sort({ _id: 1 })
        .toArray(),
    );
    return documents.map((document) => userMapper.toRecord(document));
  }

  async findById(id: string): Promise<User | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    const document = await this.run(() => this.collection.findOne({ _id }, { projection: publicFields }));
    return document === null ? undefined : userMapper.toEntity(document);
  }

  async findByEmail(email: string): Promise<User | undefined> {
    // The exact e-mail first: a case-sensitive account is found only so.
    const exact = email.trim();
    const documents = await this.run(() =>
      this.collection
        .find({ $or: [{ email: exact }, { emailKey: emailKey(email) }] }, { projection: publicFields })
        .limit(2)
        .toArray(),
    );
    const document = documents.find((found) => found.email === exact) ?? documents[0];
    return document === undefined ? undefined : userMapper.toEntity(document);
  }

  async changeEmail(id: string, email: string): Promise<User | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    const document = await this.run(() =>
      this.collection.findOneAndUpdate(
        { _id },
        { $set: { email, emailKey: emailKey(email) }, $unset: { resetToken: '' } },
        { returnDocument: 'after' },
      ),
    );
    return document === null ? undefined : userMapper.toEntity(document);
  }

  async restore(user: UserCopy): Promise<void> {
    const _id = copiedObjectId(user.id);
    const document: Omit<UserDocument, '_id'> = {
      firstName: user.firstName,
      lastName: user.lastName,
      email: user.email,
      emailKey: emailKey(user.email),
      group: user.group,
      role: user.role,
      sessionVersion: user.sessionVersion,
      ...(user.passwordHash === undefined ? {} : { password: user.passwordHash }),
      ...(user.reset === undefined
        ? {}
        : { resetToken: { digest: user.reset.tokenDigest, expiresAt: user.reset.expiresAt } }),
      ...(user.createdAt === undefined ? {} : { createdAt: user.createdAt }),
      ...(user.origin === 'unknown' ? {} : { origin: user.origin }),
    };
    await this.run(() => this.collection.replaceOne({ _id }, document, { upsert: true }));
  }

  async findCredentials(id: string): Promise<UserCredentials | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    const document = await this.run(() => this.collection.findOne({ _id }, { projection: credentialFields }));
    return document === null ? undefined : userMapper.toCredentials(document);
  }

  async setPassword(
    id: string,
    passwordHash: string,
    options: { readonly endSessions: boolean; readonly ifHashIs?: string },
  ): Promise<number | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    const filter = options.ifHashIs === undefined ? { _id } : { _id, password: options.ifHashIs };
    return this.versionAfter(filter, {
      $set: { password: passwordHash },
      $unset: { resetToken: '' },
      ...(options.endSessions ? { $inc: { sessionVersion: 1 } } : {}),
    });
  }

  async endSessions(id: string): Promise<number | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    return this.versionAfter({ _id }, { $inc: { sessionVersion: 1 } });
  }

  async setResetToken(id: string, tokenDigest: string, expiresAt: Date): Promise<boolean> {
    const _id = toObjectId(id);
    if (_id === undefined) return false;
    const result = await this.run(() =>
      this.collection.updateOne({ _id }, { $set: { resetToken: { digest: tokenDigest, expiresAt } } }),
    );
    return result.matchedCount === 1;
  }

  /**
   * Single use rests on a unique key, not on the isolation of an update (FerretDB v1 applies a conditional
   * update as an unisolated read-modify-write, so two uses could both match): the token must be pending,
   * then a marker `{_id: digest}` is inserted, and of concurrent uses exactly one insert succeeds.
   */
  async resetPassword(id: string, change: PasswordResetChange): Promise<number | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    const pending = {
      _id,
      'resetToken.digest': change.tokenDigest,
      'resetToken.expiresAt': { $gt: change.now },
    };
    const user = await this.run(() => this.collection.findOne(pending, { projection: { resetToken: 1 } }));
    const expiresAt = user?.resetToken?.expiresAt;
    if (expiresAt === undefined) return undefined;
    const claimed = await this.run(async () => {
      try {
        await this.usedResets.insertOne({ _id: change.tokenDigest, expiresAt: toDate(expiresAt) });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    });
    if (!claimed) return undefined;
    const version = await this.versionAfter(pending, {
      $set: { password: change.passwordHash },
      $unset: { resetToken: '' },
      $inc: { sessionVersion: 1 },
    });
    // A marker is needed only while its token could still be pending: drop those past their expiry.
    await this.run(() => this.usedResets.deleteMany({ expiresAt: { $lte: change.now } }));
    return version;
  }

  /** The unique `_id` lets exactly one of concurrent uses insert its mark. */
  async useInvitation(id: string, expiresAt: Date, now: Date): Promise<boolean> {
    await this.run(() => this.usedInvitations.deleteMany({ expiresAt: { $lte: now } }));
    return this.run(async () => {
      try {
        await this.usedInvitations.insertOne({ _id: id, expiresAt });
        return true;
      } catch (error) {
        if (isDuplicateKeyError(error)) return false;
        throw error;
      }
    });
  }

  async setRole(id: string, role: UserRole): Promise<User | undefined> {
    const _id = toObjectId(id);
    if (_id === undefined) return undefined;
    const document = await this.run(() =>
      this.collection.findOneAndUpdate({ _id }, { $set: { role } }, { returnDocument: 'after' }),
    );
    return document === null ? undefined : userMapper.toEntity(document);
  }

  async delete(id: string): Promise<boolean> {
    const _id = toObjectId(id);
    if (_id === undefined) return false;
    const result = await this.run(() => this.collection.deleteOne({ _id }));
    return result.deletedCount === 1;
  }

  /** Applies the update to the one matching user; answers its session version after, or undefined. */
  private async versionAfter(filter: Document, update: Document): Promise<number | undefined> {
    const document = await this.run(() =>
      this.collection.findOneAndUpdate(filter, update, { returnDocument: 'after' }),
    );
    return document === null ? undefined : userMapper.toCredentials(document).sessionVersion;
  }
}
