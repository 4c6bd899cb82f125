/**
 * @module rate-limit.case — the contract suite every RateLimiter adapter must pass (in memory,
 * Redis): per key 60 requests in any 1000 ms, per IP 10,000 requests in a minute, the request
 * over it locking the IP for an hour, the lock lifting by itself at the hour with a fresh count;
 * refused requests not counted; concurrent hits counted exactly. Time comes from a clock the
 * suite moves.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  IP_LOCK_MS,
  IP_REQUESTS_PER_MINUTE,
  KEY_REQUESTS_PER_SECOND,
  type RateLimitLock,
  type RateLimitSettings,
  type RateLimiter,
} from './rate-limit.ts';

/** A limiter with what the operator sees of it (`bourse limits`): the locks in force, and lifting one. */
export type ContractLimiter = RateLimiter & {
  locks(): RateLimitLock[] | Promise<RateLimitLock[]>;
  lift(subject: string): RateLimitLock | undefined | Promise<RateLimitLock | undefined>;
};

/** A fresh limiter with nothing counted; the suite calls `close` after each test. */
export type CreateRateLimiter = (
  settings: RateLimitSettings,
) => Promise<{ readonly limiter: ContractLimiter; close(): Promise<void> }>;

const T0 = 1_700_000_000_000;

/** Runs `body` with a fresh limiter on a clock standing at T0 that the body moves. */
async function withLimiter(
  create: CreateRateLimiter,
  settings: Omit<RateLimitSettings, 'clock'>,
  body: (l: ContractLimiter, clock: { now: number }) => Promise<void>,
): Promise<void> {
  const clock = { now: T0 };
  const made = await create({ ...settings, clock: () => clock.now });
  try {
    await body(made.limiter, clock);
  } finally {
    await made.close();
  }
}

const allowed = async (d: ReturnType<RateLimiter['hitIp']>): Promise<boolean> => (await d).allowed;

export function rateLimiterContract(name: string, create: CreateRateLimiter): void {
  describe(`${name}: per IP, 10,000 requests a minute, then locked for an hour`, () => {
    test('the 10,001st request in a minute is refused and locks the IP; the lock lifts at the hour', () =>
      withLimiter(create, {}, async (l, clock) => {
        for (let i = 0; i < IP_REQUESTS_PER_MINUTE; i++) {
          clock.now = T0 + Math.floor((i * 59_000) / IP_REQUESTS_PER_MINUTE);
          assert.ok(await allowed(l.hitIp('1.2.3.4')), `request ${i + 1}`);
        }
        const refused = await l.hitIp('1.2.3.4');
        assert.equal(refused.allowed, false);
        assert.ok(!refused.allowed && refused.retryAt === clock.now + IP_LOCK_MS);
        assert.ok(!refused.allowed && /locked until .*retry after 3600 s/.test(refused.message));
        assert.ok(await allowed(l.hitIp('1.2.3.5')), 'other IPs are unaffected');
        // Still locked just before the hour, though the minute has long passed.
        clock.now += IP_LOCK_MS - 1;
        const still = await l.hitIp('1.2.3.4');
        assert.ok(!still.allowed && /retry after 1 s/.test(still.message));
        clock.now += 1;
        assert.ok(await allowed(l.hitIp('1.2.3.4')), 'the lock lifted at the hour');
      }));

    test('after the lock lifts the count starts afresh: the whole budget again, then a new lock', () =>
      withLimiter(create, { ipRequestsPerMinute: 5, ipLockMs: 600_000 }, async (l, clock) => {
        for (let i = 0; i < 5; i++) assert.ok(await allowed(l.hitIp('ip')));
        assert.equal(await allowed(l.hitIp('ip')), false);
        clock.now += 600_000;
        for (let i = 0; i < 5; i++)
          assert.ok(await allowed(l.hitIp('ip')), `request ${i + 1} after the lock`);
        const again = await l.hitIp('ip');
        assert.ok(!again.allowed && again.retryAt === clock.now + 600_000);
      }));

    test('the window slides: requests older than a minute no longer count', () =>
      withLimiter(create, { ipRequestsPerMinute: 50 }, async (l, clock) => {
        for (let i = 0; i < 50; i++) assert.ok(await allowed(l.hitIp('ip')));
        clock.now += 60_000;
        for (let i = 0; i < 50; i++) assert.ok(await allowed(l.hitIp('ip')));
        assert.equal(await allowed(l.hitIp('ip')), false);
      }));

    test('half now, half 30 s later: the sum counts; 59 s after the first half it still does', () =>
      withLimiter(create, { ipRequestsPerMinute: 40 }, async (l, clock) => {
        for (let i = 0; i < 20; i++) await l.hitIp('a');
        for (let i = 0; i < 20; i++) await l.hitIp('b');
        clock.now += 30_000;
        for (let i = 0; i < 20; i++) assert.ok(await allowed(l.hitIp('a')));
        assert.equal(await allowed(l.hitIp('a')), false);
        clock.now += 29_999; // T0 + 59.999 s: the first second's bucket is still in the minute
        for (let i = 0; i < 20; i++) assert.ok(await allowed(l.hitIp('b')));
        assert.equal(await allowed(l.hitIp('b')), false);
      }));

    test('a lock is told once, with its end, however many requests it refuses', () => {
      const locks: [string, number, number][] = [];
      return withLimiter(
        create,
        { ipRequestsPerMinute: 3, onLock: (ip, until, perMinute) => locks.push([ip, until, perMinute]) },
        async (l) => {
          for (let i = 0; i < 3; i++) await l.hitIp('ip');
          for (let i = 0; i < 5; i++) assert.equal(await allowed(l.hitIp('ip')), false);
          assert.deepEqual(locks, [['ip', T0 + IP_LOCK_MS, 3]]);
        },
      );
    });

    test('concurrent requests are counted exactly: of 40 at once with a limit of 25, 25 pass', () =>
      withLimiter(create, { ipRequestsPerMinute: 25 }, async (l) => {
        const decisions = await Promise.all(Array.from({ length: 40 }, () => l.hitIp('burst')));
        assert.equal(decisions.filter((d) => d.allowed).length, 25);
      }));

    test('IPv6 addresses and odd text are counted as given', () =>
      withLimiter(create, { ipRequestsPerMinute: 2 }, async (l) => {
        for (const ip of ['::1', '2001:db8::1', 'a{b}c', '']) {
          assert.ok(await allowed(l.hitIp(ip)));
          assert.ok(await allowed(l.hitIp(ip)));
          assert.equal(await allowed(l.hitIp(ip)), false, ip);
        }
      }));
  });

  describe(`${name}: per key, 60 requests a second`, () => {
    test('the 61st within a second is refused, with when to retry; refused requests are not counted', () =>
      withLimiter(create, {}, async (l, clock) => {
        for (let i = 0; i < KEY_REQUESTS_PER_SECOND; i++) {
          clock.now = T0 + i * 10;
          assert.ok(await allowed(l.hitKey('k')));
        }
        clock.now = T0 + 999;
        const refused = await l.hitKey('k');
        assert.ok(!refused.allowed && refused.retryAt === T0 + 1000);
        assert.ok(!refused.allowed && /60 requests per second.*retry after 1 ms/.test(refused.message));
        assert.ok(await allowed(l.hitKey('other')));
        clock.now = T0 + 1000;
        assert.ok(await allowed(l.hitKey('k')), 'the first request left the window');
        assert.equal(await allowed(l.hitKey('k')), false, 'the second (at T0 + 10) has not');
        clock.now = T0 + 1010;
        assert.ok(await allowed(l.hitKey('k')));
      }));

    test('60 per second sustained is fine', () =>
      withLimiter(create, {}, async (l, clock) => {
        for (let i = 0; i < 300; i++) {
          clock.now = T0 + Math.floor((i * 1000) / KEY_REQUESTS_PER_SECOND);
          assert.ok(await allowed(l.hitKey('k')), `request ${i}`);
        }
      }));

    test('concurrent requests are counted exactly: of 100 at once, 60 pass', () =>
      withLimiter(create, {}, async (l) => {
        const decisions = await Promise.all(Array.from({ length: 100 }, () => l.hitKey('burst')));
        assert.equal(decisions.filter((d) => d.allowed).length, KEY_REQUESTS_PER_SECOND);
      }));
  });

  describe(`${name}: the locks in force, and lifting them (bourse limits)`, () => {
    test('a locked IP and a key at its limit are listed; lifting one lets it through at once', () =>
      withLimiter(
        create,
        { ipRequestsPerMinute: 2, ipLockMs: 60_000, keyRequestsPerSecond: 2 },
        async (l, clock) => {
          assert.deepEqual(await l.locks(), []);
          for (let i = 0; i < 3; i++) await l.hitIp('10.0.0.9');
          await l.hitKey('k1');
          clock.now += 100;
          await l.hitKey('k1');
          assert.equal(await allowed(l.hitKey('k1')), false);
          assert.deepEqual(await l.locks(), [
            { kind: 'ip', subject: '10.0.0.9', until: T0 + 60_000 },
            { kind: 'key', subject: 'k1', until: T0 + 1000 },
          ]);
          assert.equal(await l.lift('nobody'), undefined);
          assert.deepEqual(await l.lift('10.0.0.9'), { kind: 'ip', subject: '10.0.0.9', until: T0 + 60_000 });
          assert.ok(await allowed(l.hitIp('10.0.0.9')));
          assert.equal((await l.lift('k1'))?.kind, 'key');
          assert.ok(await allowed(l.hitKey('k1')));
          assert.deepEqual(await l.locks(), []);
        },
      ));

    test('a lock that expired is no longer listed', () =>
      withLimiter(create, { ipRequestsPerMinute: 1, ipLockMs: 5_000 }, async (l, clock) => {
        await l.hitIp('a');
        await l.hitIp('a');
        assert.equal((await l.locks()).length, 1);
        clock.now += 5_000;
        assert.deepEqual(await l.locks(), []);
      }));
  });
}
