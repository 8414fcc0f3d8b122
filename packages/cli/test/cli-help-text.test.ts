import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { hortus } from './harness.js';

/** The product version: the repository's root package.json (this file runs from packages/cli/dist/test). */
const productVersion = (
  JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/** Every command path under `path`, read from the "Commands:" section of its help (help itself left out). */
async function commandPaths(path: readonly string[] = []): Promise<string[][]> {
  const { stdout } = await hortus(undefined, [...path, '--help']);
  const section = /\nCommands:\n([\s\S]*?)(?:\n\n|$)/u.exec(stdout)?.[1] ?? '';
  const names = [...section.matchAll(/^ {2}([a-z][\w-]*)/gmu)]
    .map((match) => match[1] ?? '')
    .filter((name) => name !== 'help');
  const paths: string[][] = [[...path]];
  for (const name of names) paths.push(...(await commandPaths([...path, name])));
  return paths;
}

describe('hortus help texts and --version', () => {
  it('when run with --version or -V, then it prints the product version of the root package.json and exits 0', async () => {
    for (const flag of ['--version', '-V']) {
      const { code, stdout, stderr } = await hortus(undefined, [flag]);
      expect(code, stderr).to.equal(0);
      expect(stdout).to.equal(`${productVersion}\n`);
    }
  });

  it('when the CLI package is installed alone (the image), then its own version is the product version', () => {
    const own = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(own.version).to.equal(productVersion);
  });

  it('when asked for top-level help, then --version is listed without a value', async () => {
    const { stdout } = await hortus(undefined, ['--help']);
    expect(stdout).to.match(/^ {2}-V, --version {2,}print the version of Hortus$/mu);
    expect(stdout).not.to.contain('[semver]');
  });

  it('when any command prints its help, then no option states its default twice', async () => {
    const paths = await commandPaths();
    expect(paths.length).to.be.greaterThan(40);
    for (const path of paths) {
      const { stdout } = await hortus(undefined, [...path, '--help']);
      // Help wraps long descriptions, so a description is joined before looking at it.
      const text = stdout.replace(/\n {10,}/gu, ' ');
      expect(text, `hortus ${path.join(' ')} --help`).not.to.match(/\bdefaults?\b[^\n]*\(default: /u);
    }
  });
});
