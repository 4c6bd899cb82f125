import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rateLimiterContract } from './rate-limit.case.ts';
import { MemoryRateLimiter } from './rate-limit.ts';

const T0 = 1_700_000_000_000;

rateLimiterContract('in memory', async (settings) => ({
  limiter: new MemoryRateLimiter(settings),
  close: async () => undefined,
}));

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
