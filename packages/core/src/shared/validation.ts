import { InvalidInputError } from './errors.js';

/** Longest name (group, object, topic segment) we accept; long enough for any real box, short enough to index. */
export const NAME_MAX_LENGTH = 100;
export const TEXT_MAX_LENGTH = 2000;

export function requireText(value: unknown, field: string, maxLength = NAME_MAX_LENGTH): string {
  if (typeof value !== 'string') throw InvalidInputError.forField(field, 'must be a string');
  const text = value.trim();
  if (text.length === 0) throw InvalidInputError.forField(field, 'must not be empty');
  if (text.length > maxLength)
    throw InvalidInputError.forField(field, `must be at most ${maxLength} characters`);
  return text;
}

export function optionalText(value: unknown, field: string, maxLength = NAME_MAX_LENGTH): string | undefined {
  return value === undefined ? undefined : requireText(value, field, maxLength);
}

/** Accepts numbers and numeric strings ("23.45": older boxes sent text) and yields a finite number. */
export function requireNumber(value: unknown, field: string): number {
  const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof parsed !== 'number' || !Number.isFinite(parsed)) {
    throw InvalidInputError.forField(field, 'must be a finite number');
  }
  return parsed;
}

export function optionalNumber(value: unknown, field: string): number | undefined {
  return value === undefined ? undefined : requireNumber(value, field);
}

export function requireInteger(value: unknown, field: string, min: number, max: number): number {
  const parsed = requireNumber(value, field);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw InvalidInputError.forField(field, `must be a whole number from ${min} to ${max}`);
  }
  return parsed;
}

export function requireDate(value: unknown, field: string): Date {
  const date =
    value instanceof Date
      ? value
      : typeof value === 'string' || typeof value === 'number'
        ? new Date(value)
        : null;
  if (date === null || Number.isNaN(date.getTime())) {
    throw InvalidInputError.forField(field, 'must be an ISO-8601 date-time');
  }
  return new Date(date.getTime());
}

export function optionalDate(value: unknown, field: string): Date | undefined {
  return value === undefined ? undefined : requireDate(value, field);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}
