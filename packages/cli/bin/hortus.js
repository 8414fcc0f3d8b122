#!/usr/bin/env node
// The `hortus` command: runs the built CLI (`pnpm install` builds it), so starting needs no compiler.
import '../dist/src/main.js';
