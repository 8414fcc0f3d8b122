#!/usr/bin/env node
// The `hortus` command: runs the built CLI (`pnpm install` builds it), so starting needs no compiler.
// Hortus needs Node.js 22.12 or newer (better-sqlite3 13 crashes older ones). `install` brings one, the root's
// `node` devDependency: started by an older Node.js, this command hands over to that one.
import { spawn } from 'node:child_process';
// The namespace, not named imports: Node.js 20 has no enableCompileCache, and a named import of it fails
// before this file runs, so the hand-over below would never happen.
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major > 22 || (major === 22 && minor >= 12)) {
  // Starting is mostly loading some 500 modules: V8's compiled code is kept on disk (in the temporary
  // directory, or NODE_COMPILE_CACHE) for the next command. Where that cannot be written, it is skipped.
  nodeModule.enableCompileCache?.();
  await import('../dist/src/main.js');
} else {
  let runtime;
  try {
    runtime = nodeModule.createRequire(import.meta.url).resolve('node/bin/node');
  } catch {
    runtime = undefined;
  }
  if (runtime === undefined || runtime === process.execPath) {
    process.stderr.write(
      `hortus: needs Node.js 22.12 or newer, this is ${process.version}. ` +
        'Run `npx --yes pnpm@10.34.9 install` in the repository: it brings one (node_modules/.bin/node).\n',
    );
    process.exit(1);
  }
  const argv = [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)];
  const child = spawn(runtime, argv, { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
}
