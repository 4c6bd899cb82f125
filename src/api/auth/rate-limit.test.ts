import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  IP_LOCK_MS,
  IP_REQUESTS_PER_MINUTE,
  KEY_REQUESTS_PER_SECOND,
  MemoryRateLimiter,
} from './rate-limit.ts';

const T0 = 1_700_000_000_000;

function limiter(): { l: MemoryRateLimiter; clock: { now: number } } {
  const clock = { now: T0 };
  return { l: new MemoryRateLimiter({ clock: () => clock.now }), clock };
}

describe('per IP: 10,000 requests a minute, then locked for an hour', () => {
  test('the 10,001st request in a minute is refused and locks the IP; it unlocks after an hour', () => {
    const { l, clock } = limiter();
    for (let i = 0; i < IP_REQUESTS_PER_MINUTE; i++) {
      clock.now = T0 + Math.floor((i * 59_000) / IP_REQUESTS_PER_MINUTE);
      assert.ok(l.hitIp('1.2.3.4').allowed, `request ${i + 1}`);
    }
    const refused = l.hitIp('1.2.3.4');
    assert.equal(refused.allowed, false);
    assert.ok(!refused.allowed && refused.retryAt === clock.now + IP_LOCK_MS);
    assert.ok(!refused.allowed && /locked until .*retry after 3600 s/.test(refused.message));
    // Other IPs are unaffected.
    assert.ok(l.hitIp('1.2.3.5').allowed);
    // Still locked just before the hour, even though the minute has long passed.
    clock.now += IP_LOCK_MS - 1;
    assert.equal(l.hitIp('1.2.3.4').allowed, false);
    clock.now += 1;
    assert.ok(l.hitIp('1.2.3.4').allowed);
  });

  test('the window slides: requests older than a minute no longer count', () => {
    const { l, clock } = limiter();
    for (let i = 0; i < IP_REQUESTS_PER_MINUTE; i++) assert.ok(l.hitIp('ip').allowed);
    clock.now += 60_000;
    for (let i = 0; i < IP_REQUESTS_PER_MINUTE; i++) assert.ok(l.hitIp('ip').allowed);
    assert.equal(l.hitIp('ip').allowed, false);
  });

  test('half now, half 30 s later: the sum counts', () => {
    const { l, clock } = limiter();
    for (let i = 0; i < IP_REQUESTS_PER_MINUTE / 2; i++) l.hitIp('ip');
    clock.now += 30_000;
    for (let i = 0; i < IP_REQUESTS_PER_MINUTE / 2; i++) assert.ok(l.hitIp('ip').allowed);
    assert.equal(l.hitIp('ip').allowed, false);
  });
});

describe('per key: 60 requests a second', () => {
  test('the 61st within a second is refused, with when to retry; not counted', () => {
    const { l, clock } = limiter();
    for (let i = 0; i < KEY_REQUESTS_PER_SECOND; i++) {
      clock.now = T0 + i * 10;
      assert.ok(l.hitKey('k').allowed);
    }
    clock.now = T0 + 999;
    const refused = l.hitKey('k');
    assert.equal(refused.allowed, false);
    assert.ok(!refused.allowed && refused.retryAt === T0 + 1000);
    assert.ok(!refused.allowed && /60 requests per second.*retry after 1 ms/.test(refused.message));
    assert.ok(l.hitKey('other').allowed);
    clock.now = T0 + 1000;
    assert.ok(l.hitKey('k').allowed); // the first request left the window
    assert.equal(l.hitKey('k').allowed, false); // the second (at T0 + 10) has not
    clock.now = T0 + 1010;
    assert.ok(l.hitKey('k').allowed);
  });

  test('60 per second sustained forever is fine', () => {
    const { l, clock } = limiter();
    for (let i = 0; i < 600; i++) {
      clock.now = T0 + Math.floor((i * 1000) / KEY_REQUESTS_PER_SECOND);
      assert.ok(l.hitKey('k').allowed, `request ${i}`);
    }
  });
});

describe('bounded memory', () => {
  test('idle entries are swept; caps evict the least recently seen', () => {
    const clock = { now: T0 };
    const l = new MemoryRateLimiter({ clock: () => clock.now, maxTrackedIps: 100, maxTrackedKeys: 10 });
    for (let i = 0; i < 1000; i++) l.hitIp(`10.0.${i >> 8}.${i & 255}`);
    for (let i = 0; i < 50; i++) l.hitKey(`key-${i}`);
    assert.equal(l.size.ips, 100);
    assert.equal(l.size.keys, 10);
    clock.now += 61_000;
    l.hitIp('fresh');
    assert.deepEqual(l.size, { ips: 1, locks: 0, keys: 0 });
  });

  test('expired locks are swept', () => {
    const clock = { now: T0 };
    const l = new MemoryRateLimiter({ clock: () => clock.now, ipRequestsPerMinute: 2, ipLockMs: 5_000 });
    l.hitIp('a');
    l.hitIp('a');
    assert.equal(l.hitIp('a').allowed, false);
    assert.equal(l.size.locks, 1);
    clock.now += 70_000;
    l.hitIp('b');
    assert.equal(l.size.locks, 0);
  });
});

describe('locks in force, and lifting them (bourse limits)', () => {
  test('a locked IP and a key at its limit are listed; lifting one lets it through at once', () => {
    const clock = { now: T0 };
    const l = new MemoryRateLimiter({
      clock: () => clock.now,
      ipRequestsPerMinute: 2,
      ipLockMs: 60_000,
      keyRequestsPerSecond: 2,
    });
    assert.deepEqual(l.locks(), []);
    for (let i = 0; i < 3; i++) l.hitIp('10.0.0.9');
    l.hitKey('k1');
    clock.now += 100;
    l.hitKey('k1');
    assert.equal(l.hitKey('k1').allowed, false);
    assert.deepEqual(l.locks(), [
      { kind: 'ip', subject: '10.0.0.9', until: T0 + 60_000 },
      { kind: 'key', subject: 'k1', until: T0 + 1000 },
    ]);
    assert.equal(l.lift('nobody'), undefined);
    assert.deepEqual(l.lift('10.0.0.9'), { kind: 'ip', subject: '10.0.0.9', until: T0 + 60_000 });
    assert.equal(l.hitIp('10.0.0.9').allowed, true);
    assert.equal(l.lift('k1')?.kind, 'key');
    assert.equal(l.hitKey('k1').allowed, true);
    assert.deepEqual(l.locks(), []);
  });

  test('a lock that expired is no longer listed', () => {
    const clock = { now: T0 };
    const l = new MemoryRateLimiter({ clock: () => clock.now, ipRequestsPerMinute: 1, ipLockMs: 5_000 });
    l.hitIp('a');
    l.hitIp('a');
    assert.equal(l.locks().length, 1);
    clock.now += 5_000;
    assert.deepEqual(l.locks(), []);
  });
});
