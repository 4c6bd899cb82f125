import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, type OfflineCommands } from './bourse.ts';

const offline: OfflineCommands = {
  verify: () => Promise.reject(new Error('not called')),
  rebuildHistory: () => Promise.reject(new Error('not called')),
};

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (l) => (out += `${l}\n`), err: (l) => (err += `${l}\n`) }, offline);
  return { code, out, err };
}

test('malformed command lines exit 2 with the problem and the usage, before any request', async () => {
  for (const [argv, problem] of [
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['user', 'create'], /user create needs <name>/],
    [['deposit', 'credit', 'alice', 'usdt'], /needs <name> <coin> <amount>/],
    [['key', 'create', 'alice', '--perms'], /--perms needs a value/],
    [['user', 'create', 'x', '--bogus'], /unknown option --bogus/],
    [['market', 'halt'], /market halt needs <market>/],
    [['address', 'create', 'alice'], /address create needs <name> <coin>/],
    [['address', 'create', 'alice', 'usdt', '--chain'], /--chain needs a value/],
    [['withdraw-address', 'add', 'alice', 'usdt'], /withdraw-address add needs <name> <coin> <address>/],
    [['withdraw-address', 'verify', 'alice'], /withdraw-address verify needs <name> <coin> <address>/],
    [
      ['withdraw-address', 'remove', 'alice', 'usdt', 'x'],
      /unknown command 'withdraw-address remove alice usdt x'/,
    ],
    [['fund-password', 'set', 'alice'], /fund-password set needs <name> <password>/],
    [['withdraw', 'approve'], /withdraw approve needs <id>/],
    [['withdraw', 'reject'], /withdraw reject needs <id>/],
    [['withdraw', 'show'], /withdraw show needs <id>/],
    [['withdraw', 'list', '--pending=yes'], /--pending takes no value/],
    [['chain', 'deposit', '0xabc'], /chain deposit needs <address> <amount>/],
    [['chain', 'deposit', '0xabc', '1', '--memo'], /--memo needs a value/],
    [['chain', 'fail'], /chain fail needs <hash>/],
    [['chain', 'reorg'], /unknown command 'chain reorg'/],
  ] as const) {
    const r = await run([...argv, '--url', 'http://127.0.0.1:1']);
    assert.equal(r.code, 2, argv.join(' '));
    assert.match(r.err, problem);
    assert.match(r.err, /usage: bourse/);
  }
  assert.equal((await run([])).code, 2);
  assert.equal((await run(['--help'])).code, 0);
});

test('a data directory without the admin token is a clear error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bourse-cli-'));
  try {
    const r = await run(['user', 'create', 'alice', '--data', dir]);
    assert.equal(r.code, 1);
    assert.match(r.err, /cannot read the admin token/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unreachable server is a clear error, not a crash', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bourse-cli-'));
  try {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'admin.token'), 'x\n');
    const r = await run(['state', '--data', dir, '--url', 'http://127.0.0.1:1']);
    assert.equal(r.code, 1);
    assert.match(r.err, /cannot reach http:\/\/127\.0\.0\.1:1\/admin\/state/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
