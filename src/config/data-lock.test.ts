import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { acquireDataLock, LOCK_FILE, lockAddress, readLockHolder } from './data-lock.ts';
import { StartRefusedError } from './start-refusal.ts';

const root = mkdtempSync(join(tmpdir(), 'bourse-data-lock-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('data lock', () => {
  it('is held once; the holder is named; release frees it and removes the lock file', async () => {
    const lock = await acquireDataLock(root, 'server', 'stop it first');
    assert.deepEqual(
      { pid: readLockHolder(root)?.pid, role: readLockHolder(root)?.role },
      { pid: process.pid, role: 'server' },
    );
    const before = readFileSync(join(root, LOCK_FILE), 'utf8');
    await assert.rejects(acquireDataLock(root, 'verify', 'stop it first'), (error: Error) => {
      assert.ok(error instanceof StartRefusedError);
      assert.match(
        error.message,
        new RegExp(`is in use by pid ${process.pid} \\(bourse server, since .+\\): stop it first$`),
      );
      return true;
    });
    assert.equal(
      readFileSync(join(root, LOCK_FILE), 'utf8'),
      before,
      'the refused one rewrote the lock file',
    );
    await lock.release();
    assert.equal(existsSync(join(root, LOCK_FILE)), false);
    const again = await acquireDataLock(root, 'verify', 'stop it first');
    assert.equal(readLockHolder(root)?.role, 'verify');
    await again.release();
  });

  it('names the directory, not the path: `..` and a trailing slash reach the same lock', () => {
    assert.equal(lockAddress(join(root, '..', root.split('/').at(-1) as string)), lockAddress(root));
    assert.equal(lockAddress(`${root}/`), lockAddress(root));
    assert.notEqual(lockAddress(tmpdir()), lockAddress(root));
  });
});
