/**
 * `bourse journal copy` on a real venue: from the data directory's files to a JetStream stream
 * (private nats-server, `sync_interval: always`) and back, each move verified by state hash; the
 * server restarts on the destination with the state it had, goes on trading, and refuses the
 * journal it left. A copy into a stream that is not empty, or while the server runs, is refused.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { offlineCommands } from '../../src/cli/offline.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { admin, createTrader, tradeRounds, ZbClient } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const skip = natsSkipReason();
const root = mkdtempSync(join(tmpdir(), 'bourse-journal-copy-'));
const dataDir = join(root, 'data');
let nats: NatsServer | undefined;
before(async () => {
  if (skip === false) nats = await startNatsServer();
});
after(async () => {
  await nats?.stop();
  rmSync(root, { recursive: true, force: true });
});

const streamUrl = (stream: string): string => {
  const s = nats as NatsServer;
  return `${s.url}?stream=${stream}&monitor=${s.monitorUrl}`;
};

/** Runs `bourse journal copy` in process; its exit code, JSON answer and messages. */
async function copy(
  to: string,
): Promise<{ code: number; result: Record<string, unknown> | undefined; err: string }> {
  let out = '';
  let err = '';
  const code = await offlineCommands.journalCopy(
    dataDir,
    { out: (l) => (out += l), err: (l) => (err += `${l}\n`) },
    true,
    to,
  );
  return { code, result: out === '' ? undefined : (JSON.parse(out) as Record<string, unknown>), err };
}

async function state(server: ServerProcess): Promise<{ lastSeq: number; stateHash: string }> {
  const r = await admin(server.adminBase, server.token, '/admin/state', []);
  return { lastSeq: r.lastSeq as number, stateHash: r.stateHash as string };
}

/** Rounds of crossing orders through `server`'s public API. */
function trade(server: ServerProcess, a: ZbClient, b: ZbClient, rounds: number): Promise<void> {
  const [alice, bob] = [a, b].map((c) => new ZbClient(server.base, c.accessKey, c.secret)) as [
    ZbClient,
    ZbClient,
  ];
  return tradeRounds(alice, bob, rounds);
}

describe('bourse journal copy', { skip }, () => {
  test('files → stream → files, each verified by state hash; the venue goes on from each', async () => {
    // On files: two traders, trades, a snapshot, more trades.
    let server = await startServer(dataDir, ['--rate-limits=false']);
    const alice = await createTrader(server, 'alice', [['usdt', '100000']]);
    const bob = await createTrader(server, 'bob', [['btc', '10']]);
    await trade(server, alice, bob, 30);
    await admin(server.adminBase, server.token, '/admin/snapshot', []);
    await trade(server, alice, bob, 10);
    const onFiles = await state(server);
    const running = await copy(streamUrl('MOVED'));
    assert.equal(running.code, 1);
    assert.match(
      running.err,
      /the data directory .* is in use by .*: stop it first: journal copy works on a stopped venue/,
    );
    assert.equal(await server.stop(), 0);

    // Files → the stream.
    const there = await copy(streamUrl('MOVED'));
    assert.equal(there.code, 0, there.err);
    assert.equal(there.result?.records, onFiles.lastSeq);
    assert.equal(there.result?.stateHash, onFiles.stateHash);
    await assert.rejects(startServer(dataDir, []), /belongs to the JetStream stream MOVED/);
    // The offline tools read files: on a venue whose journal is a stream they refuse, saying why.
    let said = '';
    const io = { out: (): void => undefined, err: (l: string): void => void (said += l) };
    assert.equal(await offlineCommands.verify(dataDir, io, false), 1);
    assert.equal(await offlineCommands.rebuildHistory(dataDir, io, false), 1);
    assert.match(said, /verify: the journal of .* is the JetStream stream MOVED.*journal copy --to file/);
    assert.match(said, /rebuild-history: the journal of/);
    server = await startServer(dataDir, ['--rate-limits=false', '--journal-url', streamUrl('MOVED')]);
    assert.deepEqual(await state(server), onFiles);
    await trade(server, alice, bob, 10);
    const onStream = await state(server);
    assert.equal(onStream.lastSeq, onFiles.lastSeq + 20);
    assert.equal(await server.stop(), 0);

    // A copy into a stream that already holds a journal is refused, and changes nothing.
    const again = await copy(streamUrl('MOVED'));
    assert.equal(again.code, 1);
    assert.match(again.err, /already JetStream stream MOVED/);

    // The stream → files: the old segments go aside, the venue resumes on files where the stream was.
    const back = await copy('file');
    assert.equal(back.code, 0, back.err);
    assert.equal(back.result?.records, onStream.lastSeq);
    assert.equal(back.result?.stateHash, onStream.stateHash);
    assert.ok(existsSync(back.result?.movedAside as string));
    await assert.rejects(
      startServer(dataDir, ['--journal-url', streamUrl('MOVED')]),
      /belongs to the file journal/,
    );
    server = await startServer(dataDir, ['--rate-limits=false']);
    assert.deepEqual(await state(server), onStream);
    await trade(server, alice, bob, 2);
    assert.equal(await server.stop(), 0);

    // Files → a stream that is not empty: refused before anything is recorded.
    const full = await copy(streamUrl('MOVED'));
    assert.equal(full.code, 1);
    assert.match(full.err, /JetStream stream MOVED .* is not empty \(it ends at seq \d+\)/);
    server = await startServer(dataDir, ['--rate-limits=false']);
    assert.equal((await state(server)).lastSeq, onStream.lastSeq + 4);
    assert.equal(await server.stop(), 0);
  });
});
