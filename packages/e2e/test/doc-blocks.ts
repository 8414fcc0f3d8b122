import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The shell commands the docs show (issue 27 item 8), read from README.md and docs/*.md: every fenced block
 * labelled sh, bash, shell or console, and every unlabelled one that holds a `$ ` prompt or starts with a
 * command, so that a command cannot escape the docs test by losing its label. Other unlabelled blocks are
 * diagrams, HTTP exchanges and program output.
 */

export interface DocCommand {
  /** As written, continuation lines joined by newlines (bash reads them the same way). */
  readonly text: string;
  /** The output the doc shows for it (`$ ` blocks: the lines up to the next prompt; sh blocks: `# {…` comments). */
  readonly output: string;
}

export interface DocBlock {
  /** Relative to the repository root, e.g. `docs/cli.md`. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly text: string;
  /** The reason of a `<!-- not-run: reason -->` comment just before the fence, if any. */
  readonly notRun?: string;
  readonly commands: readonly DocCommand[];
}

const shellLanguages = new Set(['sh', 'bash', 'shell', 'console', 'shell-session']);
/** How an unlabelled block that is a command starts. */
const commandStart =
  /^(\$ |hortus |node |npx |pnpm |npm |curl |git |cd |export |echo |bash |docker |mosquitto_|mongo|openssl )/;
const marker = /^<!--\s*not-run:\s*(.*?)\s*-->$/;

export function docFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

export function shellBlocks(root: string, file: string): DocBlock[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[index] ?? '');
    if (fence === null) continue;
    const [, indent = '', ticks = '', lang = ''] = fence;
    let end = index + 1;
    while (end < lines.length && !(lines[end] ?? '').trimStart().startsWith(ticks)) end += 1;
    const body = lines
      .slice(index + 1, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line));
    const text = body.join('\n');
    const before = previousNonBlank(lines, index);
    const notRun = before === undefined ? undefined : marker.exec(before.trim())?.[1];
    const isShell = shellLanguages.has(lang) || (lang === '' && body.some((line) => commandStart.test(line)));
    if (isShell) {
      blocks.push({
        file,
        line: index + 1,
        lang,
        text,
        ...(notRun === undefined ? {} : { notRun }),
        commands: body.some((line) => line.startsWith('$ ')) ? promptCommands(body) : scriptCommands(body),
      });
    }
    index = end;
  }
  return blocks;
}

function previousNonBlank(lines: readonly string[], index: number): string | undefined {
  for (let at = index - 1; at >= 0; at -= 1) {
    const line = lines[at] ?? '';
    if (line.trim() !== '') return line;
  }
  return undefined;
}

/** `$ command` lines, each followed by the output the doc shows for it. */
function promptCommands(body: readonly string[]): DocCommand[] {
  const commands: DocCommand[] = [];
  let at = 0;
  while (at < body.length) {
    const line = body[at] ?? '';
    if (!line.startsWith('$ ')) {
      at += 1;
      continue;
    }
    const text = [line.slice(2)];
    at += 1;
    while (!complete(text.join('\n')) && at < body.length) text.push(body[at++] ?? '');
    const output: string[] = [];
    while (at < body.length && !(body[at] ?? '').startsWith('$ ')) output.push(body[at++] ?? '');
    commands.push({ text: text.join('\n'), output: output.join('\n').trim() });
  }
  return commands;
}

/** A plain script: each command is a line (with its continuations); `# {…` or `# […` comments after it are its output. */
function scriptCommands(body: readonly string[]): DocCommand[] {
  const commands: DocCommand[] = [];
  let at = 0;
  while (at < body.length) {
    const line = body[at] ?? '';
    if (line.trim() === '' || line.trimStart().startsWith('#')) {
      at += 1;
      continue;
    }
    const text = [line];
    at += 1;
    while (!complete(text.join('\n')) && at < body.length) text.push(body[at++] ?? '');
    const output: string[] = [];
    if (/^#\s*[[{]/.test(body[at] ?? '')) {
      output.push((body[at++] ?? '').replace(/^#\s?/, ''));
      while (/^#\s{2,}\S/.test(body[at] ?? '')) output.push((body[at++] ?? '').replace(/^#\s?/, ''));
    }
    commands.push({ text: text.join('\n'), output: output.join('\n').trim() });
  }
  return commands;
}

/** Whether bash would stop reading here: no quote left open and no trailing backslash. */
function complete(text: string): boolean {
  let quote: "'" | '"' | undefined;
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at];
    if (quote === "'") {
      if (char === "'") quote = undefined;
    } else if (char === '\\') {
      if (at === text.length - 1) return false;
      at += 1;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === '#' && (at === 0 || /\s/.test(text[at - 1] ?? ''))) {
      // A comment runs to the end of its line; quotes in it do not count.
      const newline = text.indexOf('\n', at);
      if (newline === -1) return true;
      at = newline;
    }
  }
  return quote === undefined;
}

/**
 * The doc's output as a pattern: `…` and `...` stand for anything, as do ids and times ("ids and times will
 * differ"), and whitespace may differ (the docs wrap long JSON lines).
 */
export function outputPattern(output: string): RegExp {
  const wildcard = '\u0000';
  const normalized = output
    .replace(/…|\.\.\./g, wildcard)
    .replace(/\b[0-9a-f]{24}\b/g, wildcard)
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, wildcard);
  const source = normalized
    .split(wildcard)
    .map((part) =>
      part
        .split(/\s+/)
        .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('\\s*'),
    )
    .join('[\\s\\S]*?');
  return new RegExp(source);
}
