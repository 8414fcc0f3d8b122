import { createServer, type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { type DocBlock, docFiles, outputPattern, shellBlocks } from './doc-blocks.js';
import { type CommandResult, DocSession, repositoryRoot } from './doc-session.js';
import { type BlockPlan, type FilePlan, filePlans, planFor, plansWithoutBlock } from './doc-plans.js';

/**
 * Issue 27 item 8: every shell command shown in README.md and docs/*.md runs here, or its block carries
 * `<!-- not-run: <reason> -->` just before the fence. Each doc file gets a temporary directory of its own
 * (its ./data is the SQLite store the commands share) and, when a block calls :8080, a server on it; each
 * command must exit 0 (or the code its plan names) and print what the doc shows for it. How a block is made
 * runnable (placeholders, set-up not shown in the doc) is in doc-plans.ts.
 */

const files = docFiles(repositoryRoot);

function substitute(text: string, plan: BlockPlan | undefined, url: string | undefined): string {
  let result = text.replaceAll('node packages/cli/bin/hortus.js', 'hortus');
  if (url !== undefined) {
    result = result.replace(/https?:\/\/(127\.0\.0\.1|localhost):8080/g, url);
  }
  for (const [from, to] of plan?.substitute ?? [])
    result = result.replaceAll(from, to.replaceAll('{url}', url ?? ''));
  return result;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function setUp(session: DocSession, script: string, where: string): Promise<void> {
  const done = await session.bash(script);
  expect(done.code, `set-up of ${where}\n${done.stdout}${done.stderr}`).to.equal(0);
}

function describeResult(command: string, result: CommandResult): string {
  return `$ ${command}\nexit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
}

// The blocks run once, in the default pass: a pass per store would run the same SQLite sessions again.
const skip = process.env['HORTUS_TEST_STORE'] !== undefined;

describe(`the commands shown in the docs${skip ? ' (their blocks run in the default pass only)' : ''}`, function () {
  // A block is a few CLI starts (under 10 s quiet); a loaded 2-core machine can make that ten times slower.
  this.timeout(180_000);

  it('when a block is neither run nor marked not-run, then it is an error: every shell block is one of the two', () => {
    const all = files.flatMap((file) => shellBlocks(repositoryRoot, file));
    expect(all.length).to.be.greaterThan(20);
    const emptyReasons = all
      .filter((block) => block.notRun === '')
      .map((block) => `${block.file}:${block.line}`);
    expect(emptyReasons, 'a not-run marker says why').to.deep.equal([]);
    const commandless = all
      .filter((block) => block.notRun === undefined && block.commands.length === 0)
      .map((block) => `${block.file}:${block.line}`);
    expect(commandless).to.deep.equal([]);
    expect(plansWithoutBlock(all), 'plans in doc-plans.ts that find no runnable block').to.deep.equal([]);
    expect(Object.keys(filePlans).filter((file) => !files.includes(file))).to.deep.equal([]);
  });

  // The files run two at a time (two cores), each its blocks in order; a test waits for its block's run.
  const runs = new Map<DocBlock, Promise<void>>();
  const work = files.map((file) => ({
    file,
    blocks: shellBlocks(repositoryRoot, file).filter((block) => block.notRun === undefined),
  }));
  before(() => {
    if (skip) return;
    const queue = work
      .filter(({ blocks }) => blocks.length > 0)
      .map(({ file, blocks }) => runFile(file, blocks));
    const starts = queue.map((run) => run.start);
    for (const run of queue) for (const [block, done] of run.blocks) runs.set(block, done);
    const next = async (): Promise<void> => {
      for (let start = starts.shift(); start !== undefined; start = starts.shift()) await start();
    };
    void Promise.all([next(), next()]);
  });

  for (const { file, blocks } of work) {
    if (blocks.length === 0 || skip) continue;
    describe(file, () => {
      for (const block of blocks) {
        it(`when the block at line ${block.line} runs, then each command succeeds as shown`, async () => {
          await runs.get(block);
        });
      }
    });
  }
});

/** A file's blocks in order in one session; `start` runs them, each block's promise settles with its checks. */
function runFile(
  file: string,
  blocks: readonly DocBlock[],
): { start: () => Promise<void>; blocks: [DocBlock, Promise<void>][] } {
  const filePlan = filePlans[file] ?? {};
  const settled = blocks.map(() => {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<void>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    // A block nobody awaits (a test filtered out with -g) must not be an unhandled rejection.
    done.catch(() => undefined);
    return { done, resolve, reject };
  });
  const start = async (): Promise<void> => {
    let session: DocSession | undefined;
    try {
      session = new DocSession({
        ...filePlan.env,
        ...(filePlan.httpsPort === true ? { HTTPS_PORT: String(await freePort()) } : {}),
      });
      if (filePlan.setup !== undefined) await setUp(session, filePlan.setup, file);
      for (const [index, block] of blocks.entries()) {
        await runBlock(session, block, filePlan).then(settled[index]?.resolve, settled[index]?.reject);
      }
    } catch (error) {
      for (const { reject } of settled) reject(error);
    } finally {
      await session?.close();
    }
  };
  return { start, blocks: blocks.map((block, index) => [block, settled[index]?.done ?? Promise.resolve()]) };
}

async function runBlock(session: DocSession, block: DocBlock, filePlan: FilePlan): Promise<void> {
  const plan = planFor(block);
  const needsServer =
    plan?.server === true || block.commands.some((command) => command.text.includes(':8080'));
  if (needsServer && session.url === undefined) {
    await session.startServer(filePlan.serverArgs ?? [], filePlan.serverEnv);
  }
  if (plan?.setup !== undefined) await setUp(session, plan.setup, `${block.file}:${block.line}`);
  const commands = block.commands.map((command) => substitute(command.text, plan, session.url));
  const script = commands.map((command, index) => {
    if (plan?.skip?.[index] !== undefined) return ':';
    const before = plan?.before?.[index];
    return before === undefined ? command : `{ ${before}\n} >/dev/null 2>&1\n${command}`;
  });
  const results = await session.runCommands(script);
  block.commands.forEach((shown, index) => {
    if (plan?.skip?.[index] !== undefined) return;
    const result = results[index] ?? { code: -1, stdout: '', stderr: 'not run' };
    const where = `${block.file}:${block.line}, command ${index + 1}\n${describeResult(commands[index] ?? '', result)}`;
    expect(result.code, where).to.equal(plan?.exit?.[index] ?? 0);
    const checks = plan?.output?.[index];
    if (checks === 'not-compared') return;
    const printed = `${result.stdout}\n${result.stderr}`;
    const patterns =
      checks ?? (shown.output === '' ? [] : [outputPattern(substitute(shown.output, plan, session.url))]);
    for (const pattern of patterns)
      expect(printed, `${where}\nexpected to match ${pattern}`).to.match(pattern);
  });
}
