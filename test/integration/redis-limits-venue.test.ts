/**
 * `--limits-url`: two server processes counting one IP's trade-API requests in one Redis (a
 * private redis-server: a lock set here must not outlive the test). The request over the limit
 * through either locks the IP on both; the one that set the lock logs it; the operator lists and
 * lifts it through either. An unreachable Redis
 * is refused at start in one line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { redisSkipReason, startPrivateRedis, type PrivateRedis } from '../fixtures/redis-server.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { admin, createTrader, TEST_USER_AGENT } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const skip = await redisSkipReason();
const root = mkdtempSync(join(tmpdir(), 'bourse-redis-limits-'));
let redis: PrivateRedis | undefined;
const servers: ServerProcess[] = [];
before(async () => {
  if (skip === false) redis = await startPrivateRedis();
});
after(async () => {
  for (const s of servers) await s.stop();
  await redis?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A trade-API request with no valid signature: counted per IP before authentication. */
async function unsigned(server: ServerProcess): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.base}/api/getAccountInfo?accesskey=nobody&sign=x&reqTime=1`, {
    headers: { 'user-agent': TEST_USER_AGENT },
  });
  return (await response.json()) as Record<string, unknown>;
}

describe('rate limits in Redis, shared by two server processes', { skip }, () => {
  test('an IP has one budget across both: the request over it through A locks it on B too', async () => {
    const url = (redis as PrivateRedis).url;
    const flags = ['--limits-url', url, '--ip-requests-per-minute', '6'];
    const a = await startServer(join(root, 'a'), flags);
    servers.push(a);
    const b = await startServer(join(root, 'b'), flags);
    servers.push(b);
    assert.match(a.output(), /rate limits: in Redis at redis:\/\/127\.0\.0\.1:\d+/);
    const alice = await createTrader(a, 'alice', [['usdt', '100']]);

    for (let i = 0; i < 3; i++) {
      const r = await alice.call('getAccountInfo');
      assert.ok('result' in r, JSON.stringify(r));
    }
    for (let i = 0; i < 3; i++)
      assert.notEqual((await unsigned(b)).code, 4002, 'B counts, then refuses the signature');
    const locked = await alice.call('getAccountInfo');
    assert.equal(locked.code, 4002);
    assert.match(
      String(locked.message),
      /IP 127\.0\.0\.1 made more than 6 requests in a minute and is locked/,
    );
    assert.equal((await unsigned(b)).code, 4002, 'locked on B as well');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.match(
      a.output(),
      /rate limit: IP 127\.0\.0\.1 made more than 6 trade-API requests in a minute and is locked/,
    );
    // The operator sees the lock from either process and lifts it for both.
    const listed = await admin(b.adminBase, b.token, '/admin/limits/list', []);
    assert.deepEqual(
      (listed.locks as { kind: string; subject: string }[]).map((l) => [l.kind, l.subject]),
      [['ip', '127.0.0.1']],
    );
    const lifted = await admin(b.adminBase, b.token, '/admin/limits/lift', [['subject', '127.0.0.1']]);
    assert.equal(lifted.code, 1000, JSON.stringify(lifted));
    assert.ok('result' in (await alice.call('getAccountInfo')), 'A serves the IP again');
    assert.doesNotMatch(
      b.output(),
      /rate limit: IP 127\.0\.0\.1/,
      'the lock is logged once, by the process that set it',
    );
  });

  test('an unreachable Redis is refused at start, in one line naming it', async () => {
    await assert.rejects(
      startServer(join(root, 'c'), ['--limits-url', 'redis://127.0.0.1:1']),
      /bourse: cannot start: cannot reach the rate-limit Redis at redis:\/\/127\.0\.0\.1:1: .*\n/,
    );
  });
});
