#!/usr/bin/env node
// The `bourse` command: runs src/cli with Node 24 (the project's own, from node_modules) even
// when the shell's `node` is older, since the sources are TypeScript that Node 24 runs directly.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// `bourse engine`, `bourse gateway` and `bourse history` are the scale-out roles (docs/scale-out.md): processes that
// take the server's flags; every other word is an operator command of src/cli.
const ROLES = { engine: 'engine-role.ts', gateway: 'gateway-role.ts', history: 'history-role.ts' };
const named = Object.hasOwn(ROLES, process.argv[2] ?? '') ? ROLES[process.argv[2]] : undefined;
// A role's --help is answered by the CLI, which loads none of the role's modules.
const help = process.argv.includes('--help') || process.argv.includes('-h');
const role = help ? undefined : named;
const entry = role === undefined ? join(root, 'src', 'cli', 'main.ts') : join(root, 'src', 'cluster', role);
const args = process.argv.slice(role === undefined ? 2 : 3);
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
if (role === undefined) {
  const run = spawnSync(node, [entry, ...args], { stdio: 'inherit' });
  process.exit(run.status ?? 1);
} else {
  // A long-running role: a manager's SIGTERM or SIGINT reaches it (a kill -9 of this wrapper
  // cannot; managers should run `node src/cluster/<role>.ts` directly).
  const child = spawn(node, [entry, ...args], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.once('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
}
