import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  dropPrefix,
  redisSkipReason,
  startPrivateRedis,
  testPrefix,
  TEST_REDIS_URL,
  type PrivateRedis,
} from '../../../test/fixtures/redis-server.ts';
import { rateLimiterContract } from './rate-limit.case.ts';
import { KEY_REQUESTS_PER_SECOND } from './rate-limit.ts';
import { RedisRateLimiter, redactRedisUrl } from './redis-rate-limit.ts';

const skip = await redisSkipReason();
const prefixes: string[] = [];
after(async () => {
  if (skip === false) for (const p of prefixes) await dropPrefix(p);
});

function prefix(): string {
  const p = testPrefix();
  prefixes.push(p);
  return p;
}

if (skip === false) {
  rateLimiterContract('Redis', async (settings) => {
    // A generous bound: on a loaded machine Redis may pause longer than the default, and the
    // contract is about what Redis decides (the bound has tests of its own below).
    const limiter = await RedisRateLimiter.open({
      ...settings,
      url: TEST_REDIS_URL,
      prefix: prefix(),
      timeoutMs: 5_000,
    });
    return {
      limiter,
      close: async () => {
        assert.equal(limiter.failures, 0, 'every hit was decided by Redis');
        await limiter.close();
      },
    };
  });
} else {
  test('Redis rate limiter contract', { skip }, () => undefined);
}

describe('two gateways on one Redis share the budget', { skip }, () => {
  test('per key: 30 through each, then both refuse; a lock set through one holds on the other', async () => {
    const p = prefix();
    const clock = { now: 1_700_000_000_000 };
    const settings = {
      url: TEST_REDIS_URL,
      prefix: p,
      clock: () => clock.now,
      ipRequestsPerMinute: 10,
      timeoutMs: 5_000,
    };
    const a = await RedisRateLimiter.open(settings);
    const b = await RedisRateLimiter.open(settings);
    try {
      for (let i = 0; i < KEY_REQUESTS_PER_SECOND / 2; i++) {
        assert.ok((await a.hitKey('k')).allowed);
        assert.ok((await b.hitKey('k')).allowed);
      }
      assert.equal((await a.hitKey('k')).allowed, false);
      assert.equal((await b.hitKey('k')).allowed, false);
      // Concurrently through both: the IP's 10 a minute, not 10 per gateway.
      const decisions = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).hitIp('9.9.9.9')),
      );
      assert.equal(decisions.filter((d) => d.allowed).length, 10);
      const fromB = await b.hitIp('9.9.9.9');
      assert.ok(!fromB.allowed && /locked until/.test(fromB.message));
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('when Redis fails, each gateway decides with its own counts', { skip }, () => {
  let redis: PrivateRedis | undefined;
  before(async () => {
    if (skip === false) redis = await startPrivateRedis();
  });
  after(() => redis?.stop());

  test('paused: a hit is answered without Redis (per-gateway limits); resumed: Redis decides again', async () => {
    const r = redis as PrivateRedis;
    const problems: (string | undefined)[] = [];
    const limiter = await RedisRateLimiter.open({
      url: r.url,
      prefix: prefix(),
      retryAfterMs: 200,
      onDegraded: (problem) => problems.push(problem),
    });
    try {
      assert.ok((await limiter.hitKey('k')).allowed);
      r.pause();
      // Would never settle if the request path awaited a paused Redis.
      assert.ok((await limiter.hitKey('k')).allowed);
      assert.equal(limiter.degraded, true);
      assert.equal(limiter.failures, 1);
      assert.match(String(problems[0]), /no answer in 50 ms/);
      // Meanwhile the gateway's own counts hold the limit (59 more, then refused), at once.
      for (let i = 0; i < KEY_REQUESTS_PER_SECOND - 1; i++) assert.ok((await limiter.hitKey('k')).allowed);
      assert.equal((await limiter.hitKey('k')).allowed, false);
      assert.equal(limiter.failures, 1, 'within retryAfterMs Redis is not tried again');
      r.resume();
      await new Promise((resolve) => setTimeout(resolve, 250));
      assert.ok((await limiter.hitKey('other')).allowed);
      assert.equal(limiter.degraded, false);
      assert.deepEqual(problems.slice(1), [undefined]);
    } finally {
      r.resume();
      await limiter.close();
    }
  });

  test('killed: hits fail fast to the gateway counts; restarted: back to Redis by itself', async () => {
    const r = redis as PrivateRedis;
    const limiter = await RedisRateLimiter.open({ url: r.url, prefix: prefix(), retryAfterMs: 100 });
    try {
      assert.ok((await limiter.hitIp('1.1.1.1')).allowed);
      await r.kill();
      for (let i = 0; i < 10; i++) assert.ok((await limiter.hitIp('1.1.1.1')).allowed);
      assert.equal(limiter.degraded, true);
      await r.restart();
      const deadline = Date.now() + 10_000;
      while (limiter.degraded && Date.now() < deadline) {
        await limiter.hitIp('1.1.1.1');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(limiter.degraded, false, 'the limiter went back to Redis after its restart');
      // The restarted Redis is empty (no persistence here) and lost the scripts: EVAL reloads them.
      assert.ok((await limiter.hitKey('k')).allowed);
    } finally {
      await limiter.close();
    }
  });

  test('an unreachable Redis at start is refused with the URL, its password hidden', async () => {
    await assert.rejects(
      RedisRateLimiter.open({ url: 'redis://user:secret@127.0.0.1:1' }),
      /cannot reach the rate-limit Redis at redis:\/\/user:\*\*\*@127\.0\.0\.1:1/,
    );
    assert.equal(redactRedisUrl('not a url'), 'redis://(unparsable URL)');
  });
});
