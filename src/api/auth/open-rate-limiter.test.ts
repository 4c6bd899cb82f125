import assert from 'node:assert/strict';
import { test } from 'node:test';
import { limitsLocation } from './open-rate-limiter.ts';
import { StartRefusedError } from '../../config/start-refusal.ts';

test('--limits-url: ?prefix= names the key prefix and is not passed to Redis', () => {
  assert.deepEqual(limitsLocation('redis://127.0.0.1:6379/2'), { url: 'redis://127.0.0.1:6379/2' });
  assert.deepEqual(limitsLocation('redis://:pw@10.0.0.5:6379/0?prefix=venue-a:'), {
    url: 'redis://:pw@10.0.0.5:6379/0',
    prefix: 'venue-a:',
  });
  assert.throws(() => limitsLocation('redis://127.0.0.1:6379?prefix='), StartRefusedError);
});
