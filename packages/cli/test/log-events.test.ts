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

  it('when a request line is written by its own method, then it is the same text as the info event, whatever the path holds', () => {
    const at = new Date('2026-11-29T06:00:00.125Z');
    const paths = [
      '/api/current_state',
      '/api/a"b\\c',
      '/api/\u0000\u001f\u007f\u2028',
      '/api/\ud83c\udf31',
      '/api/\ud800x\udfff',
      '',
    ];
    const lines = paths.flatMap((path, index) => [
      { requestId: 'b7c1c4f2-5f8e-4f4e-9a59-0a4c7a7d2b11', method: 'GET', path, status: 304, ms: 0.3 },
      { requestId: `id.${index}:x`, method: 'G"T', path, status: 200, ms: 12, keyId: 'k"\u0001' },
    ]);
    let byMethod = '';
    let byInfo = '';
    const fast = createJsonLogger(
      (text) => (byMethod += text),
      () => at,
    );
    const generic = createJsonLogger(
      (text) => (byInfo += text),
      () => at,
    );

    for (const line of lines) {
      fast.request?.(line);
      generic.info('request', line);
    }
    fast.flush?.();
    generic.flush?.();

    expect(byMethod).to.equal(byInfo);
    expect(
      byMethod
        .trimEnd()
        .split('\n')
        .map((text) => JSON.parse(text) as unknown),
    ).to.deep.equal(
      lines.map((line) => ({ time: at.toISOString(), level: 'info', event: 'request', ...line })),
    );
  });

  it('when the logger is at warn or writes text, then a request line by its own method is as the info event', () => {
    const at = new Date('2026-11-29T06:00:00.125Z');
    const line = { requestId: 'r1', method: 'GET', path: '/api/x', status: 200, ms: 1.2 };
    for (const [level, format] of [
      ['warn', 'json'],
      ['info', 'text'],
    ] as const) {
      let byMethod = '';
      let byInfo = '';
      const fast = createJsonLogger(
        (text) => (byMethod += text),
        () => at,
        level,
        format,
      );
      const generic = createJsonLogger(
        (text) => (byInfo += text),
        () => at,
        level,
        format,
      );

      fast.request?.(line);
      generic.info('request', line);
      fast.flush?.();
      generic.flush?.();

      expect(byMethod, `${level} ${format}`).to.equal(byInfo);
    }
  });
});
