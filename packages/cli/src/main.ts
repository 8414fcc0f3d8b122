#!/usr/bin/env node
import 'reflect-metadata';
import { stopWhenLauncherEnds } from './launcher.js';
import { run } from './run.js';

// `hortus group list | head -1` closes the pipe early; that is the reader's choice, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

stopWhenLauncherEnds(process.env);

process.exitCode = await run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  exit: (code) => process.exit(code),
});
