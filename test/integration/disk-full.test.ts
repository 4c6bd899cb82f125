/**
 * A full disk (issue 13), on a small filesystem made for the test (tmpfs; root only): orders in
 * flight when the journal cannot write are answered "not accepted" (1009), never "internal error";
 * the log says once, without a stack, why the server stopped; it exits 1; and every order that was
 * acknowledged is there after a restart on the enlarged filesystem.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { RESULTS } from '../../src/domain/result-codes.ts';
import { startServer } from '../fixtures/server-process.ts';
import { createTrader, ZbClient } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-disk-full-'));
const disk = join(root, 'disk');
mkdirSync(disk);

/** Mounts a tmpfs of `size` on `disk`; the reason it cannot, or undefined. */
function mountSmallDisk(size: string): string | undefined {
  if (process.platform !== 'linux') return 'tmpfs mounts need Linux';
  if (process.getuid?.() !== 0) return 'mounting a small filesystem needs root';
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', disk], {
    encoding: 'utf8',
  });
  return mounted.status === 0 ? undefined : `mount -t tmpfs failed: ${mounted.stderr.trim()}`;
}

const cannot = mountSmallDisk('8m');
let mounted = cannot === undefined;
after(() => {
  if (mounted) spawnSync('umount', ['-l', disk]);
  rmSync(root, { recursive: true, force: true });
});

let fillers = 0;

/** Fills the disk with one more file, leaving about `leftBytes` free. */
function fill(leftBytes: number): void {
  const { bavail, bsize } = statfsSync(disk);
  const bytes = Math.max(0, bavail * bsize - leftBytes);
  writeFileSync(join(disk, `filler-${++fillers}`), Buffer.alloc(bytes));
}

test(
  'disk full: in-flight orders are not accepted (1009), the stop is said once without a stack, nothing acknowledged is lost',
  {
    skip:
      cannot === undefined
        ? false
        : `${cannot}: skipped (it runs wherever a tmpfs can be mounted, e.g. as root)`,
  },
  async () => {
    const dataDir = join(disk, 'data');
    const server = await startServer(dataDir, ['--rate-limits=false']);
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
    const ann = await createTrader(server, 'ann', [['usdt', '100000000']]);
    fill(96 * 1024);

    const acknowledged: string[] = [];
    const answers = new Map<number, number>();
    let stopped = false;
    const place = async (): Promise<void> => {
      while (!stopped) {
        let reply: Record<string, unknown>;
        try {
          reply = await ann.call('order', [
            ['currency', 'btc_usdt'],
            ['tradeType', '1'],
            ['price', '1000'],
            ['amount', '0.01'],
          ]);
        } catch {
          stopped = true; // the server has gone
          return;
        }
        const code = Number(reply['code']);
        answers.set(code, (answers.get(code) ?? 0) + 1);
        if (code === 1000) acknowledged.push(String(reply['id']));
        else {
          assert.equal(code, RESULTS.NOT_ACCEPTED.code, JSON.stringify(reply));
          assert.equal(reply['message'], RESULTS.NOT_ACCEPTED.message);
          stopped = true;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, place));
    assert.equal(await exited, 1, 'the server exits non-zero');
    // The batch being written when the disk filled was in flight: its orders are not accepted.
    assert.ok((answers.get(RESULTS.NOT_ACCEPTED.code) ?? 0) > 0, JSON.stringify([...answers]));
    assert.ok(acknowledged.length > 0, 'no order was acknowledged before the disk filled');
    assert.equal(answers.get(RESULTS.INTERNAL_ERROR.code), undefined, 'answered "internal error"');

    const output = server.output();
    const fatal = output.split('\n').filter((l) => l.includes('"level":"fatal"'));
    assert.equal(fatal.length, 1, output);
    assert.match(fatal[0] as string, /no space left on device|ENOSPC|disk is full|SQLITE_FULL/i);
    assert.match(fatal[0] as string, /free space/);
    assert.doesNotMatch(output, /\n\s+at |"stack"/, `a stack trace in the log:\n${output}`);

    // A start on the full disk: one line, no stack.
    fill(0);
    await assert.rejects(startServer(join(disk, 'fresh')), (error: Error) => {
      assert.match(error.message, /server exited \(1\)[\s\S]*bourse: cannot start: .*(ENOSPC|no space left)/);
      assert.doesNotMatch(error.message, /\n\s+at |"stack"/, error.message);
      return true;
    });

    // Room again: every acknowledged order is there.
    for (let i = 1; i <= fillers; i++) rmSync(join(disk, `filler-${i}`));
    assert.equal(spawnSync('mount', ['-o', 'remount,size=64m', disk]).status, 0);
    const again = await startServer(dataDir, ['--rate-limits=false']);
    try {
      const annAgain = new ZbClient(again.base, ann.accessKey, ann.secret);
      for (const id of acknowledged) {
        const order = await annAgain.call('getOrder', [
          ['currency', 'btc_usdt'],
          ['id', id],
        ]);
        assert.equal(String(order['id']), id, `acknowledged order ${id} lost: ${JSON.stringify(order)}`);
      }
    } finally {
      assert.equal(await again.stop(), 0);
      spawnSync('umount', [disk]);
      mounted = false;
    }
  },
);
