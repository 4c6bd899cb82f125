/**
 * `npm start` as a process manager runs it (issue 13): SIGTERM to npm stops the exchange cleanly
 * and leaves no orphan; npm killed outright (SIGKILL) does not leave one running either.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { readListenFile, type ListenRecord } from '../../src/config/listen-file.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const ROOT = join(import.meta.dirname, '..', '..');
const root = mkdtempSync(join(tmpdir(), 'bourse-npm-start-'));
after(() => rmSync(root, { recursive: true, force: true }));

const npmFound = spawnSync('npm', ['--version'], { stdio: 'ignore' }).status === 0;
const skip = npmFound || process.env['CI'] === 'true' ? false : 'npm is not on the PATH';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * `npm start` on its own data directory; resolves once the server's listen.json names it. With
 * `group`, npm leads a process group of its own, as in a terminal (Ctrl-C signals the group).
 */
async function npmStart(
  name: string,
  group = false,
): Promise<{ npm: ChildProcess; dataDir: string; listen: ListenRecord; output: () => string }> {
  const dataDir = join(root, name);
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    detached: group,
    env: {
      ...process.env,
      BOURSE_DATA: dataDir,
      BOURSE_PORT: '0',
      BOURSE_ADMIN_PORT: '0',
      BOURSE_DEMO: 'false',
      XDG_CONFIG_HOME: join(root, 'config'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  npm.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  for (let i = 0; i < 1200; i++) {
    const listen = existsSync(join(dataDir, 'listen.json')) ? readListenFile(dataDir) : undefined;
    if (listen !== undefined) return { npm, dataDir, listen, output: () => output };
    if (npm.exitCode !== null) break;
    await sleep(100);
  }
  killAll(npm, group);
  throw new Error(`npm start did not start the server:\n${output}`);
}

/** Kills npm and, with `group`, every process of its group (the server included). */
function killAll(npm: ChildProcess, group: boolean): void {
  try {
    if (group && npm.pid !== undefined) process.kill(-npm.pid, 'SIGKILL');
    else npm.kill('SIGKILL');
  } catch {
    // already gone
  }
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 150 && alive(pid); i++) await sleep(100);
  return !alive(pid);
}

test(
  'SIGTERM to npm start stops the exchange cleanly: no process left, nothing listening',
  { skip },
  async () => {
    const { npm, dataDir, listen, output } = await npmStart('term');
    assert.notEqual(listen.pid, npm.pid, 'the server runs as npm’s child');
    const exited = new Promise((resolve) => npm.once('exit', resolve));
    npm.kill('SIGTERM');
    await exited;
    assert.ok(await gone(listen.pid), `the server (pid ${listen.pid}) outlived npm:\n${output()}`);
    assert.equal(await answers(listen.public.port), false, 'the public port still answers');
    // The signal itself reached the server (not only npm and the shell in between).
    assert.match(output(), /"msg":"stopping: SIGTERM/, `the server did not get the SIGTERM:\n${output()}`);
    assert.match(output(), /"msg":"stopped"/, 'the server did not stop cleanly');
    assert.equal(existsSync(join(dataDir, 'listen.json')), false, 'a clean stop removes listen.json');
  },
);

test(
  'npm killed with SIGKILL: the server notices and stops instead of running on as an orphan',
  { skip },
  async () => {
    const { npm, listen, output } = await npmStart('kill');
    const exited = new Promise((resolve) => npm.once('exit', resolve));
    npm.kill('SIGKILL');
    await exited;
    try {
      assert.ok(await gone(listen.pid), `the server (pid ${listen.pid}) outlived npm:\n${output()}`);
    } finally {
      if (alive(listen.pid)) process.kill(listen.pid, 'SIGKILL');
    }
  },
);

test(
  'Ctrl-C on npm start (SIGINT to the process group, and npm’s copy) is one clean stop: exit code 0',
  { skip },
  async () => {
    const { npm, listen, output } = await npmStart('ctrl-c', true);
    try {
      const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
      // What a terminal does (the whole foreground group), then what npm does (its own copy to
      // its child), sent here too in case this npm forwards nothing.
      process.kill(-(npm.pid as number), 'SIGINT');
      process.kill(listen.pid, 'SIGINT');
      const code = await exited;
      assert.ok(await gone(listen.pid), `the server (pid ${listen.pid}) outlived npm:\n${output()}`);
      assert.doesNotMatch(output(), /stopping at once/, 'two copies of one Ctrl-C were taken as two');
      assert.match(output(), /"msg":"stopping: SIGINT"/, output());
      assert.match(output(), /"msg":"stopped"/, `the server did not stop cleanly:\n${output()}`);
      assert.equal(code, 0, `npm start exited ${String(code)}:\n${output()}`);
    } finally {
      killAll(npm, true);
    }
  },
);
