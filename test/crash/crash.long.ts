/**
 * Crash suite: the real server under a load of signed order commands, killed with SIGKILL at
 * random moments, 20+ rounds. After each kill, from the data directory alone:
 * - every acknowledged order and cancel is in the journal (nothing acknowledged is lost);
 * - recovery (snapshot + journal) and a replay from scratch reach the same state hash;
 * - every invariant holds, conservation included (no command is half-applied);
 * and the server restarts on the same directory and goes on.
 *
 * `CRASH_SEED=<n>` repeats a run; `CRASH_ROUNDS=<n>` changes the number of rounds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readGenesis } from '../../src/config/data-dir.ts';
import type { SequencedCommand } from '../../src/domain/commands.ts';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { SnapshotStore } from '../../src/journal/snapshot-store.ts';
import { decodeCommand } from '../../src/sequencer/command-codec.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { admin, createTrader, ZbClient } from '../fixtures/zb-client.ts';
import { seededRandom } from '../../src/store/trading-stream.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url, 30 * 60_000);

const SEED = Number(process.env['CRASH_SEED'] ?? 20261121);
const ROUNDS = Number(process.env['CRASH_ROUNDS'] ?? 20);
const CLIENTS = 6;
const USERS = 4;

const root = mkdtempSync(join(tmpdir(), 'bourse-crash-'));
const dataDir = join(root, 'data');
after(() => rmSync(root, { recursive: true, force: true }));

const SERVER_FLAGS = ['--snapshot-every', '400', '--rate-limits=false'];

interface Acked {
  readonly placed: Set<string>;
  readonly cancelled: Set<number>;
}

async function setUpUsers(server: ServerProcess): Promise<ZbClient[]> {
  const clients: ZbClient[] = [];
  for (let i = 0; i < USERS; i++) {
    clients.push(
      await createTrader(server, `trader${i}`, [
        ['usdt', '10000000'],
        ['btc', '1000'],
      ]),
    );
  }
  return clients;
}

/** Sends orders and cancels until stopped; records what the server acknowledged. */
async function load(
  client: ZbClient,
  next: () => number,
  tag: string,
  acked: Acked,
  stop: { now: boolean },
): Promise<void> {
  const mine: number[] = [];
  let n = 0;
  while (!stop.now) {
    try {
      if (mine.length > 5 && next() < 0.3) {
        const id = mine.splice(Math.floor(next() * mine.length), 1)[0] as number;
        const r = await client.call('cancelOrder', [
          ['currency', 'btc_usdt'],
          ['id', String(id)],
        ]);
        if (r.code === 1000) acked.cancelled.add(id);
      } else {
        const cid = `${tag}x${n++}`;
        const buy = next() < 0.5;
        const price = (30000 + Math.round((next() - (buy ? 0.6 : 0.4)) * 200)).toFixed(2);
        const r = await client.call('order', [
          ['currency', 'btc_usdt'],
          ['tradeType', buy ? '1' : '0'],
          ['price', price],
          ['amount', (0.001 + Math.floor(next() * 100) / 10000).toFixed(4)],
          ['customerOrderId', cid],
          ...(next() < 0.15 ? ([['orderType', '2']] as [string, string][]) : []),
        ]);
        if (r.code === 1000) {
          acked.placed.add(cid);
          mine.push(Number(r.id));
        }
      }
    } catch {
      // The server was killed mid-request: an unanswered request was never acknowledged.
      return;
    }
  }
}

/** Checks the data directory after a kill, with the journal and snapshots alone. */
async function verifyDataDir(acked: Acked): Promise<{ records: number; hash: string }> {
  const journal = FileJournal.open(join(dataDir, 'journal'));
  try {
    const placed = new Set<string>();
    const cancelled = new Set<number>();
    for (const { seq, payload } of journal.read(1)) {
      const cmd: SequencedCommand = decodeCommand(seq, payload);
      if (cmd.type === 'PlaceOrder' && cmd.clientOrderId !== '') placed.add(cmd.clientOrderId);
      if (cmd.type === 'CancelOrder') cancelled.add(cmd.orderId);
    }
    for (const cid of acked.placed)
      assert.ok(placed.has(cid), `acknowledged order ${cid} is not in the journal`);
    for (const id of acked.cancelled)
      assert.ok(cancelled.has(id), `acknowledged cancel of ${id} is not in the journal`);

    const genesis = readGenesis(dataDir);
    const log = SILENT_LOG;
    const snapshots = new SnapshotStore(join(dataDir, 'snapshots'));
    const fromSnapshot = await recover({ genesis, journal, snapshots, log });
    const fromScratch = await recover({ genesis, journal, snapshots: undefined, ignoreSnapshots: true, log });
    fromSnapshot.engine.assertInvariants();
    fromScratch.engine.assertInvariants();
    const hash = fromSnapshot.engine.stateHash();
    assert.equal(
      hash,
      fromScratch.engine.stateHash(),
      'snapshot + journal and a replay from scratch disagree',
    );
    return { records: journal.durableSeq, hash };
  } finally {
    await journal.close();
  }
}

test(`crash: ${ROUNDS} rounds of kill -9 under load (seed ${SEED})`, { timeout: 15 * 60_000 }, async () => {
  const next = seededRandom(SEED);
  const acked: Acked = { placed: new Set(), cancelled: new Set() };
  let server = await startServer(dataDir, SERVER_FLAGS);
  const clients = await setUpUsers(server);
  const keys = clients.map((c) => [c.accessKey, c.secret] as const);
  let lastRecords = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const stop = { now: false };
    const loops = Array.from({ length: CLIENTS }, (_, i) => {
      const [accessKey, secret] = keys[i % keys.length] as readonly [string, string];
      return load(new ZbClient(server.base, accessKey, secret), next, `r${round}c${i}`, acked, stop);
    });
    await new Promise((resolve) => setTimeout(resolve, 150 + Math.floor(next() * 900)));
    await server.kill();
    stop.now = true;
    await Promise.all(loops);

    const { records, hash } = await verifyDataDir(acked);
    assert.ok(records > lastRecords, `round ${round}: no progress (journal at ${records})`);
    lastRecords = records;

    server = await startServer(dataDir, SERVER_FLAGS);
    const state = await admin(server.adminBase, server.token, '/admin/state', []);
    assert.equal(
      state.lastSeq,
      records,
      `round ${round}: the restarted server is not where the journal ends`,
    );
    assert.equal(
      state.stateHash,
      hash,
      `round ${round}: the restarted server's state differs (seed ${SEED})`,
    );
    console.log(
      `round ${round}: ${records} journal records, ${acked.placed.size} orders acknowledged so far`,
    );
  }
  // History, brought up to date at start-up, answers for acknowledged orders.
  const client = new ZbClient(server.base, keys[0]?.[0] as string, keys[0]?.[1] as string);
  const sample = [...acked.placed].filter((cid) => cid.endsWith('c0x0')).slice(0, 5);
  for (const cid of sample) {
    const r = await client.call('getOrder', [
      ['currency', 'btc_usdt'],
      ['customerOrderId', cid],
    ]);
    assert.equal(typeof r.id, 'string', `getOrder ${cid} after restarts: ${JSON.stringify(r)}`);
  }
  assert.equal(await server.stop(), 0);
});
