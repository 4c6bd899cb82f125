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
