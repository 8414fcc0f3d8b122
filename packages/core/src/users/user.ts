import { InvalidInputError } from '../shared/errors.js';

/** A user as every route shows it: no password or hash is ever part of it. */
export interface User {
  readonly id: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly group: string;
}

export type NewUser = Omit<User, 'id'>;

export const EMAIL_MAX_LENGTH = 254;
const emailPattern = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/u;

export function requireEmail(value: unknown, field = 'email'): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw InvalidInputError.forField(field, 'is required');
  const email = value.trim();
  if (email.length > EMAIL_MAX_LENGTH || !emailPattern.test(email)) {
    throw InvalidInputError.forField(field, 'must be a valid e-mail address');
  }
  return email;
}
