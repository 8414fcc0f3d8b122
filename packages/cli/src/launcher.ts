import { readFileSync } from 'node:fs';

/** This process's group (Linux's /proc/self/stat), or undefined where it cannot be read. */
function processGroup(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // After the command name (in parentheses, which may hold spaces): state, parent, group.
    const group = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
    return Number.isInteger(group) && group > 0 ? group : undefined;
  } catch {
    return undefined;
  }
}

/** Whether the parent is the `node` package's shell shim (node_modules/.bin/node), which runs Node without exec. */
function parentIsNodeShim(): boolean {
  try {
    const argv = readFileSync(`/proc/${process.ppid}/cmdline`, 'utf8').split('\0');
    return argv.some((part) => /(^|\/)node_modules\/\.bin\/node$/u.test(part));
  } catch {
    return false;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Started by a package manager's script (`npx pnpm start`), the process a supervisor signals is the launcher
 * at the top of a chain of package managers, shells and the `node` package's shim, and not every link passes
 * SIGTERM on: the server was left running, orphaned. So under a package manager, the end of the process
 * group's leader (the launcher) is taken as the SIGTERM it was sent; and under the shim alone
 * (`node_modules/.bin/node hortus.js serve`), the end of the shim. Started directly (systemd, a container's
 * CMD, a test with a group of its own), nothing is watched.
 */
export function stopWhenLauncherEnds(
  env: Readonly<Record<string, string | undefined>>,
  intervalMs = 500,
): void {
  const watched = new Set<number>();
  const leader = env['npm_lifecycle_event'] === undefined ? undefined : processGroup();
  if (leader !== undefined && leader !== process.pid) watched.add(leader);
  if (parentIsNodeShim()) watched.add(process.ppid);
  const launchers = [...watched].filter(isRunning);
  if (launchers.length === 0) return;
  const timer = setInterval(() => {
    if (launchers.every(isRunning)) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, intervalMs);
  timer.unref();
}
