/**
 * Issue 30: a `bourse engine` that steps down ("this engine takes no more commands and exits")
 * exits. Each test starts a leading engine in the documented deployment's shape (its journal on
 * a private nats-server with `sync_interval: always`, its history on PostgreSQL, written by
 * itself through its history worker, the limits in Redis), with a WebSocket client and a
 * keep-alive HTTP client connected to it and orders going in, then makes it lose its lease: a
 * pause past the lease (SIGSTOP, then SIGCONT), or NATS gone. The process must exit (status 1)
 * within a generous deadline; a test that fails names what it printed.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  startEngineCandidate,
  writeMasterKeyFile,
  type EngineCandidate,
} from '../fixtures/engine-candidate.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../fixtures/postgres.ts';
import { dropPrefix, redisSkipReason, TEST_REDIS_URL, testPrefix } from '../fixtures/redis-server.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { WsTestClient } from '../fixtures/ws-client.ts';
import { createTrader, type ZbClient } from '../fixtures/zb-client.ts';

fileTimeLimit(import.meta.url);

const skip = natsSkipReason() || (await pgSkipReason()) || (await redisSkipReason());
/** How long a stepped-down engine may take to exit before the test fails (generous: a loaded machine). */
const EXIT_DEADLINE_MS = 30_000;

let root: string;
let database: TestDatabase | undefined;
const prefix = testPrefix();

before(async () => {
  if (skip !== false) return;
  root = mkdtempSync(join(tmpdir(), 'bourse-step-down-'));
  database = await createTestDatabase();
});
after(async () => {
  await database?.drop();
  await dropPrefix(prefix).catch(() => undefined);
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A leading engine with clients on it; `stop` ends everything the test started. */
async function leaderUnderUse(
  name: string,
  nats: NatsServer,
): Promise<{ engine: EngineCandidate; stop(): Promise<void> }> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const engine = startEngineCandidate(join(dir, 'engine'), [
    '--journal-url',
    `${nats.url}?stream=STEP_${name}&subject=step.${name}&monitor=${nats.monitorUrl}`,
    '--history-url',
    `${(database as TestDatabase).url}?schema=${name}`,
    '--limits-url',
    `${TEST_REDIS_URL}?prefix=${encodeURIComponent(`${prefix}${name}:`)}`,
    '--master-key-file',
    writeMasterKeyFile(dir),
    '--lease-ttl-ms',
    '1000',
  ]);
  let ws: WsTestClient | undefined;
  let running = true;
  let orders: Promise<void> = Promise.resolve();
  try {
    const at = await engine.leading();
    const trader: ZbClient = await createTrader(at, `${name}-t`, [
      ['usdt', '1000000'],
      ['btc', '100'],
    ]);
    ws = await WsTestClient.connect(`${at.base.replace(/^http/, 'ws')}/websocket`);
    ws.subscribe('btcusdt_depth');
    await ws.onChannel('btcusdt_depth');
    // Orders one after the other on a keep-alive connection, until the engine stops answering.
    orders = (async () => {
      for (let i = 0; running; i++) {
        await trader
          .call('order', [
            ['currency', 'btc_usdt'],
            ['tradeType', String(i % 2)],
            ['price', `${30000 + (i % 5) * 10}.00`],
            ['amount', '0.0100'],
          ])
          .catch(() => pause(50));
      }
    })();
    await pause(300);
  } catch (error) {
    running = false;
    await engine.kill();
    throw error;
  }
  return {
    engine,
    stop: async () => {
      running = false;
      await engine.kill();
      await ws?.close().catch(() => undefined);
      await orders;
    },
  };
}

/** Resolves with the exit code once `engine` has exited; fails after the deadline, naming its output. */
async function exitsInTime(engine: EngineCandidate): Promise<number | string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `the engine said it steps down but was still running ${EXIT_DEADLINE_MS} ms later; it printed:\n${engine.output().slice(-4_000)}`,
          ),
        ),
      EXIT_DEADLINE_MS,
    );
  });
  try {
    return await Promise.race([engine.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a stepped-down engine exits (issue 30)', { skip }, () => {
  test('paused past its lease, then resumed: it steps down and exits', async () => {
    const nats = await startNatsServer();
    const leader = await leaderUnderUse('paused', nats).catch(async (error: unknown) => {
      await nats.stop();
      throw error;
    });
    try {
      leader.engine.pause();
      await pause(2_000);
      leader.engine.resume();
      const code = await exitsInTime(leader.engine);
      assert.equal(code, 1, leader.engine.output());
      assert.match(leader.engine.output(), /stepping down|deposed/);
    } finally {
      await leader.stop();
      await nats.stop();
    }
  });

  test('cut off from NATS: it steps down and exits', async () => {
    const nats = await startNatsServer();
    const leader = await leaderUnderUse('cutoff', nats).catch(async (error: unknown) => {
      await nats.stop();
      throw error;
    });
    try {
      await nats.stop();
      const code = await exitsInTime(leader.engine);
      assert.equal(code, 1, leader.engine.output());
      assert.match(leader.engine.output(), /stepping down/);
    } finally {
      await leader.stop();
      await nats.stop().catch(() => undefined);
    }
  });
});
