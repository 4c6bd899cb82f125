/**
 * The WebSocket request channels' fuzz run (`npm test`): generated requests over every request
 * channel and parameter (ws-fuzz.ts). WS_FUZZ_SEED picks the draw, WS_FUZZ_RUNS the count.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REQUEST_CHANNELS } from '../../src/api/ws/requests.ts';
import { fuzzTarget } from './http-fuzz.ts';
import { fuzzWs, wsFuzzTarget } from './ws-fuzz.ts';

const SEED = Number(process.env['WS_FUZZ_SEED'] ?? 20261201);
const RUNS = Number(process.env['WS_FUZZ_RUNS'] ?? 1_500);

test(
  `WebSocket fuzz: ${RUNS} requests over every request channel and parameter (seed ${SEED}): one frame each, the interface's codes, refusals change nothing`,
  { timeout: 300_000 },
  async () => {
    const target = await fuzzTarget();
    const t = await wsFuzzTarget(target);
    try {
      // The catalogue is the declarations': every request channel, with its endpoint's parameters less currency.
      for (const channel of REQUEST_CHANNELS) {
        const entries = t.endpoints.filter((e) => e.method === channel.endpoint.method);
        assert.ok(entries.length > 0, `${channel.endpoint.method} is not fuzzed over the WebSocket`);
        for (const e of entries) {
          assert.deepEqual(
            Object.keys(e.params),
            Object.keys(channel.endpoint.params).filter((name) => name !== 'currency'),
            e.path,
          );
        }
      }
      const seen = await fuzzWs(t, RUNS, SEED);
      for (const endpoint of t.endpoints)
        assert.ok(seen.has(endpoint.path), `${endpoint.path} was never drawn`);
      // Each channel (of a good market or coin) got past authentication to its own checks.
      for (const endpoint of t.endpoints.filter((e) => !/^(nosuchusdt|doge)_/.test(e.path))) {
        const codes = [...(seen.get(endpoint.path)?.keys() ?? [])];
        assert.ok(
          codes.some((c) => ![1003, 3006, 1012].includes(c)),
          `${endpoint.path} never got past authentication: ${codes.join(', ')}`,
        );
      }
    } finally {
      await t.close();
      await target.close();
    }
  },
);
