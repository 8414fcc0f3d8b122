import { readFile } from 'node:fs/promises';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';

const MAX_SECRET_CHARS = 4096;

/** One trailing line break (what `echo` and editors add) is not part of a secret. */
function oneSecret(text: string, from: string): string {
  if (text.length > MAX_SECRET_CHARS) throw new UsageError(`the secret ${from} is too long`);
  const secret = text.replace(/\r?\n$/u, '');
  if (secret === '') throw new UsageError(`${from} gave an empty secret`);
  return secret;
}

/**
 * A secret from stdin (`--secret-stdin`) or a file (`--secret-file`): never from argv, which every user of
 * the machine sees in the process list.
 */
export async function readSecret(
  io: RunIo,
  from: { readonly stdin?: boolean; readonly file?: string },
): Promise<string | undefined> {
  if (from.stdin === true && from.file !== undefined)
    throw new UsageError('give --secret-stdin or --secret-file, not both');
  if (from.file !== undefined) {
    let text: string;
    try {
      text = await readFile(from.file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new UsageError(`--secret-file ${from.file} could not be read (${code})`);
    }
    return oneSecret(text, '--secret-file');
  }
  if (from.stdin !== true) return undefined;
  let text = '';
  for await (const chunk of io.stdin ?? process.stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.length > MAX_SECRET_CHARS) break;
  }
  return oneSecret(text, '--secret-stdin');
}
