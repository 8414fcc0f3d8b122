import { type Invitation, type SessionClaims, type VerifiedInvitation } from './account.js';

/** bcrypt in practice; the identity package binds it. */
export interface PasswordHasher {
  /**
   * A new hash at the current cost. `deferrable` work (sign-up) waits behind every other password check
   * (log-ins), and is refused with ThrottledError when too much of it waits already.
   */
  hash(password: string, options?: { readonly deferrable?: boolean }): Promise<string>;
  /** False for a wrong password and for text that is not a hash this hasher knows. */
  verify(password: string, hash: string): Promise<boolean>;
  /** Whether a stored hash is weaker than new ones (a lower cost) and should be replaced. */
  needsRehash(hash: string): boolean;
  /** A valid hash of no one's password, to spend the same time when there is nothing to verify. */
  readonly dummyHash: string;
}

export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

/** Outgoing mail. `send` rejects when the message could not be handed over. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** Signed, self-contained tokens: log-in sessions and sign-up invitations, each valid only as its kind. */
export interface TokenService {
  issueSession(claims: SessionClaims): Promise<string>;
  /** The claims of a valid, unexpired session token this server signed; undefined for anything else. */
  verifySession(token: string): Promise<SessionClaims | undefined>;
  issueInvitation(invitation: Invitation): Promise<string>;
  verifyInvitation(token: string): Promise<VerifiedInvitation | undefined>;
}

/** One-time secrets (reset tokens): random text and the digest the store keeps instead of it. */
export interface OneTimeTokens {
  /** 32 random bytes as 64 hex characters. */
  generate(): string;
  digest(token: string): string;
}

/** Secrets the server makes once and keeps in its store (the token signing key without AUTH_SECRET). */
export interface ServerSecretRepository {
  /**
   * The secret stored under `name`; when there is none, stores `candidate` and answers it. Concurrent
   * calls (several servers starting together) all answer the one value that was stored.
   */
  findOrCreate(name: string, candidate: string): Promise<string>;
  /** Every stored secret by name (`hortus store copy`). */
  list(): Promise<{ readonly name: string; readonly value: string }[]>;
  /** Stores a secret copied from another store, replacing the one of that name. */
  restore(name: string, value: string): Promise<void>;
}

export const PASSWORD_HASHER = Symbol.for('hortus.PasswordHasher');
export const MAILER = Symbol.for('hortus.Mailer');
export const TOKEN_SERVICE = Symbol.for('hortus.TokenService');
export const ONE_TIME_TOKENS = Symbol.for('hortus.OneTimeTokens');
export const SERVER_SECRET_REPOSITORY = Symbol.for('hortus.ServerSecretRepository');
