#!/usr/bin/env node
// The `bourse` command: runs src/cli with Node 24 (the project's own, from node_modules) even
// when the shell's `node` is older, since the sources are TypeScript that Node 24 runs directly.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'src', 'cli', 'main.ts');
const major = Number(process.versions.node.split('.')[0]);
let node = process.execPath;
if (major < 24) {
  const bundled = join(root, 'node_modules', '.bin', 'node');
  if (!existsSync(bundled)) {
    console.error('bourse needs Node 24: run `npm install` in the project first');
    process.exit(1);
  }
  node = bundled;
}
const run = spawnSync(node, [entry, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
