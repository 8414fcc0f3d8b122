#!/usr/bin/env node
// Import cycles inside packages (issue 25 item 8): every relative import between a package's source files,
// type-only imports included (as `madge --circular` counts them), must form no cycle.
// Usage: node scripts/check-cycles.mjs [packages/<pkg> ...]   (no arguments: every package)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const packages =
  process.argv.length > 2
    ? process.argv.slice(2)
    : readdirSync(join(root, 'packages'))
        .map((name) => join('packages', name))
        // A test-only package (e2e) has no src/ to check.
        .filter((path) => existsSync(join(root, path, 'src')));

function sourceFiles(directory) {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/u.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const importPattern = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gu;

/** The cycles among one package's files, each as the list of files around it. */
function cyclesOf(sourceRoot) {
  const files = sourceFiles(sourceRoot);
  const known = new Set(files);
  const edges = new Map();
  for (const file of files) {
    const targets = [];
    for (const match of readFileSync(file, 'utf8').matchAll(importPattern)) {
      const target = resolve(dirname(file), match[1].replace(/\.js$/u, '.ts'));
      if (known.has(target)) targets.push(target);
    }
    edges.set(file, targets);
  }
  const cycles = [];
  const state = new Map(); // undefined: unvisited, 1: on the path, 2: done
  const path = [];
  const visit = (file) => {
    state.set(file, 1);
    path.push(file);
    for (const target of edges.get(file) ?? []) {
      if (state.get(target) === 1) cycles.push([...path.slice(path.indexOf(target)), target]);
      else if (state.get(target) === undefined) visit(target);
    }
    path.pop();
    state.set(file, 2);
  };
  for (const file of files) if (state.get(file) === undefined) visit(file);
  return cycles;
}

let found = 0;
for (const pkg of packages) {
  const sourceRoot = resolve(root, pkg, 'src');
  const cycles = cyclesOf(sourceRoot);
  found += cycles.length;
  for (const cycle of cycles) {
    console.error(`${pkg}: import cycle ${cycle.map((file) => relative(sourceRoot, file)).join(' > ')}`);
  }
  if (cycles.length === 0) console.log(`${pkg}: no import cycles`);
}
process.exit(found === 0 ? 0 : 1);
