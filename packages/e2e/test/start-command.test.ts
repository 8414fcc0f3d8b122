import { eventually, expect } from './harness.js';
import { join } from 'node:path';
import { cliMain, repositoryRoot, spawnServe, describeOncePerRun } from './served-process.js';

/*
 * Issue 33, item 12: the README's first command runs the server under npx, pnpm, two shells and the `node`
 * package's shim, which do not all pass SIGTERM on. A supervisor signals the top process only; the server was
 * left running, orphaned and still serving.
 */

/** Whether any process of the group is left (signal 0 to the whole group). */
function groupRunning(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

describeOncePerRun('The README start command and SIGTERM', function () {
  // npx and pnpm start first (a few seconds quiet, much longer beside a second test run).
  this.timeout(180_000);

  it('when only the top process of `npx pnpm start` is sent SIGTERM, then the server stops and nothing of its process group remains', async () => {
    const served = await spawnServe(
      {},
      { command: ['npx', '--yes', 'pnpm@10.34.9', 'start'], detached: true, startMs: 120_000 },
    );
    const group = served.child.pid ?? 0;
    try {
      expect((await fetch(`${served.url}/healthz`)).status).to.equal(200);

      served.child.kill('SIGTERM');

      await eventually(
        () => expect(groupRunning(group), 'a process of the group is still running').to.equal(false),
        60_000,
      );
      await expect(fetch(`${served.url}/healthz`)).to.be.rejected;
      expect(served.output()).to.include('"event":"stopped"');
    } finally {
      if (groupRunning(group)) process.kill(-group, 'SIGKILL');
      await served.cleanUp();
    }
  });

  it("when the `node` package's shim (node_modules/.bin/node, which runs Node without exec) is sent SIGTERM, then the server it started stops too", async () => {
    const shim = join(repositoryRoot, 'node_modules/.bin/node');
    const served = await spawnServe({}, { command: [shim, cliMain, 'serve', '--port', '0'], detached: true });
    const group = served.child.pid ?? 0;
    try {
      expect((await fetch(`${served.url}/healthz`)).status).to.equal(200);

      served.child.kill('SIGTERM');

      await eventually(
        () => expect(groupRunning(group), 'a process of the group is still running').to.equal(false),
        60_000,
      );
      expect(served.output()).to.include('"event":"stopped"');
    } finally {
      if (groupRunning(group)) process.kill(-group, 'SIGKILL');
      await served.cleanUp();
    }
  });
});
