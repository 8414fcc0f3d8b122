import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

// Reading the container recipes as an engine would (no engine runs where Hortus is tested): the Dockerfile's
// stages, compose.yaml with its ${VAR:-default} interpolation, and the `docker run` example of
// docs/deployment.md. container-recipe.test.ts and container-compose.test.ts share them.

export const root = fileURLToPath(new URL('../../../../', import.meta.url));

export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}
export interface Stage {
  readonly from: string;
  readonly name?: string;
  readonly instructions: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\n/gu, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/u);
    const args = rest.join(' ');
    if (keyword.toUpperCase() === 'FROM') {
      const [from = '', as, name] = args.split(/\s+/u);
      stages.push({ from, ...(as?.toUpperCase() === 'AS' && name ? { name } : {}), instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) throw new Error(`${keyword} before FROM`);
      stage.instructions.push({ keyword: keyword.toUpperCase(), args });
    }
  }
  return stages;
}

export function readDockerfile(): Stage[] {
  return parseDockerfile(readFileSync(join(root, 'deploy/Dockerfile'), 'utf8'));
}

/** ENV a=b c=d (the key=value form only) as pairs. */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.instructions.filter(({ keyword }) => keyword === 'ENV')) {
    for (const pair of args.split(/\s+/u)) {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`ENV ${args}: only the key=value form is simulated`);
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return env;
}

/** Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, and $$ for a `$`. */
export function interpolate(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(
    /\$\$|\$\{(\w+)(?:(:?)([-?])([^}]*))?\}/gu,
    (whole, name?: string, colon?: string, kind?: string, word?: string) => {
      if (whole === '$$' || name === undefined) return '$';
      const value = env[name];
      const missing = value === undefined || (colon === ':' && value === '');
      if (!missing) return value;
      if (kind === '?') throw new Error(`${name}: ${word ?? 'required'}`);
      return kind === '-' ? (word ?? '') : '';
    },
  );
}

/** A compose service, only as much as the checks read. */
export interface ComposeService {
  readonly image?: string;
  readonly build?: unknown;
  readonly ports?: string[];
  readonly environment?: Record<string, string>;
  readonly volumes?: string[];
  readonly command?: string[] | string;
  readonly entrypoint?: string[];
  readonly healthcheck?: unknown;
  readonly restart?: string;
}
export interface ComposeFile {
  readonly services: Record<string, ComposeService>;
  readonly volumes?: Record<string, unknown>;
}

/** deploy/compose.yaml as compose reads it with `env` as the shell's environment (deploy/.env left out). */
export function readCompose(env: Readonly<Record<string, string>>): ComposeFile {
  const text = readFileSync(join(root, 'deploy/compose.yaml'), 'utf8');
  // Interpolated after parsing, value by value, as compose does: a comment's `$` is no variable.
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return interpolate(value, env);
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, walk(inner)]));
    return value;
  };
  return walk(parse(text)) as ComposeFile;
}

/** A published port `host:container` (or `address:host:container`) as its two numbers. */
export function publishedPort(mapping: string): { host: number; container: number } {
  const parts = mapping.split(':');
  return { host: Number(parts.at(-2)), container: Number(parts.at(-1)) };
}

/** A `docker run` command: its published ports, volumes, environment and image. */
export interface DockerRun {
  readonly ports: string[];
  readonly volumes: string[];
  /** `-e NAME` without a value takes the caller's: undefined here. */
  readonly env: Record<string, string | undefined>;
  readonly image: string;
}

/** The `docker run` example of docs/deployment.md: the one fenced line (with continuations) that starts so. */
export function dockerRunExample(): DockerRun {
  const doc = readFileSync(join(root, 'docs/deployment.md'), 'utf8').replace(/\\\n\s*/gu, '');
  const lines = doc.split('\n').filter((line) => line.startsWith('docker run '));
  if (lines.length !== 1)
    throw new Error(`docs/deployment.md: ${lines.length} lines start with "docker run "`);
  const words = (lines[0] as string).split(/\s+/u).slice(2);
  const run: DockerRun = { ports: [], volumes: [], env: {}, image: '' };
  const withValue = new Set(['-p', '-v', '-e', '--name', '--restart']);
  for (let at = 0; at < words.length; at += 1) {
    const word = words[at] as string;
    if (!withValue.has(word)) {
      if (word.startsWith('-')) continue;
      return { ...run, image: word };
    }
    const value = words[(at += 1)] ?? '';
    if (word === '-p') run.ports.push(value);
    if (word === '-v') run.volumes.push(value);
    if (word === '-e') {
      const equals = value.indexOf('=');
      run.env[equals < 0 ? value : value.slice(0, equals)] = equals < 0 ? undefined : value.slice(equals + 1);
    }
  }
  throw new Error('docs/deployment.md: the docker run example names no image');
}
