import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJsonLogger } from '@hortus/cli';
import { expect } from 'chai';

const root = fileURLToPath(new URL('../../../..', import.meta.url));

/** `"event":"x"` in the docs that is not a log line: the alert webhook's body (docs/alerts.md). */
const NOT_LOG_EVENTS = new Set(['opened']);

/**
 * The log events the docs name: `"event":"x"` in examples, and a backquoted name in a sentence that says it
 * is logged ("logged (`x`", "logs `x`", "`x` is logged"). A name ending in "..." is a prefix.
 */
function documentedEvents(): Map<string, string> {
  const events = new Map<string, string>();
  const docs = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'));
  for (const doc of docs) {
    const text = readFileSync(join(root, 'docs', doc), 'utf8').replace(/\s+/gu, ' ');
    const patterns = [
      /"event":"([^"]+)"/gu,
      /\blog(?:ged|s)? (?:as |why )?\(?`([^`]+)`/gu,
      /`([^`]+)`,? is logged/gu,
    ];
    for (const pattern of patterns) {
      for (const match of text.matchAll(pattern)) {
        const name = match[1]!.replace(/^"(.*)"$/u, '$1');
        // A whole JSON line in backquotes is read by the first pattern.
        if (name.startsWith('{') || NOT_LOG_EVENTS.has(name) || events.has(name)) continue;
        events.set(name, doc);
      }
    }
  }
  return events;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'dist' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('Documented log events', () => {
  it('when the docs name a log event, then the source writes an event of that name', () => {
    const packages = readdirSync(join(root, 'packages'));
    const source = packages
      .flatMap((pkg) => {
        try {
          return sourceFiles(join(root, 'packages', pkg, 'src'));
        } catch {
          return [];
        }
      })
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const events = documentedEvents();
    expect(events.size, 'log events found in the docs').to.be.greaterThan(20);
    expect([...events.keys()]).to.include('alert delivery given up');
    const missing = [...events].filter(([name]) => {
      const prefix = name.replace(/,? ?\.\.\.$/u, '');
      const exact = prefix === name;
      return ![`'`, '`', '"'].some((quote) => source.includes(`${quote}${prefix}${exact ? quote : ''}`));
    });
    expect(missing.map(([name, doc]) => `${doc}: ${name}`)).to.deep.equal([]);
  });

  it('when fields name event, time or level, then the line keeps its event name and the fields as <name>Field', () => {
    let text = '';
    const logger = createJsonLogger((line) => (text += line));

    logger.error('alert delivery given up', {
      group: 'gh',
      event: 'opened',
      time: 1,
      level: 'x',
      attempts: 8,
    });
    logger.flush?.();

    expect(JSON.parse(text)).to.deep.include({
      level: 'error',
      event: 'alert delivery given up',
      eventField: 'opened',
      timeField: 1,
      levelField: 'x',
      group: 'gh',
      attempts: 8,
    });
  });
});
