import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import type { ApplyResult } from '../engine/engine.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';
import { memoryLog, SILENT_LOG } from '../observability/memory-log.ts';
import { encodeCommand } from '../sequencer/command-codec.ts';
import type { AppliedCommand } from '../sequencer/sequencer.ts';
import { HistoryFollower } from './history-follower.ts';
import { HISTORY_THREAD_LIMITS } from './history-thread-limits.ts';
import type { HistoryEntry } from './history-store.ts';
import { SqliteHistoryStore } from './sqlite-history-store.ts';
import { TradingStream, type EngineRecorder } from './trading-stream.ts';

const dir = mkdtempSync(join(tmpdir(), 'bourse-history-follower-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every row of every table, as sorted JSON lines per table. */
function dump(path: string): Record<string, string[]> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    return Object.fromEntries(
      tables.map(({ name }) => [
        String(name),
        db
          .prepare(`SELECT * FROM "${String(name)}"`)
          .all()
          .map((row) => JSON.stringify(row))
          .sort(),
      ]),
    );
  } finally {
    db.close();
  }
}

/** Commands from+1..to of the recorder as the sequencer hands them to listeners. */
function appliedRange(rec: EngineRecorder, from: number, to: number): AppliedCommand[] {
  return rec.commands.slice(from, to).map((command, i) => ({
    command,
    result: { result: 'OK', events: (rec.entries[from + i] as HistoryEntry).events } as ApplyResult,
    payload: encodeCommand(command),
  }));
}

/** A stream whose history up to `split` is in both stores, and the engine's snapshot there. */
async function prepared(
  name: string,
  steps: number,
  split: number,
): Promise<{
  rec: EngineRecorder;
  snapshot: EngineSnapshot;
  stateHash: string;
  path: string;
  refPath: string;
}> {
  const stream = new TradingStream({ seed: 7, users: 12, startTime: 1_763_769_600_000, meanStepMs: 40 });
  stream.setup();
  for (let i = 0; i < split; i++) stream.step();
  const rec = stream.recorder;
  const snapshot = rec.engine.snapshot();
  const stateHash = rec.engine.stateHash(snapshot);
  for (let i = split; i < steps; i++) stream.step();
  const path = join(dir, `${name}.sqlite`);
  const refPath = join(dir, `${name}-ref.sqlite`);
  const store = SqliteHistoryStore.open(path);
  const ref = SqliteHistoryStore.open(refPath);
  await store.applyBatch(rec.entries.slice(0, snapshot.lastSeq));
  await ref.applyBatch(rec.entries);
  await store.close();
  await ref.close();
  return { rec, snapshot, stateHash, path, refPath };
}

describe('HistoryFollower', () => {
  test('a replica started from a snapshot writes the same history as the events themselves', async () => {
    const { rec, snapshot, stateHash, path, refPath } = await prepared('same', 3_000, 700);
    const logs = memoryLog();
    const follower = new HistoryFollower({ store: { kind: 'sqlite', path }, snapshot, stateHash }, logs.log, {
      gatherMs: 2,
      gatherCommands: 50,
    });
    let fatal: Error | undefined;
    follower.onFatal((e) => (fatal = e));
    // Uneven batches, as group commits hand them over, some of them while earlier ones are written.
    let at = snapshot.lastSeq;
    let size = 1;
    while (at < rec.seq) {
      const to = Math.min(rec.seq, at + size);
      follower.enqueue(appliedRange(rec, at, to));
      at = to;
      size = (size * 7) % 97;
      if (size % 5 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.ok(follower.behind > 0, 'something is still on its way');
    await follower.drain();
    assert.equal(follower.behind, 0);
    assert.equal(follower.writtenSeq, rec.seq);
    // Its young generation bounded (bench:soak: V8's default of 128 MiB made the RSS step for minutes).
    assert.equal(
      follower.threadLimits.maxYoungGenerationSizeMb,
      HISTORY_THREAD_LIMITS.maxYoungGenerationSizeMb,
    );
    await follower.close();
    assert.equal(fatal, undefined);
    assert.deepEqual(logs.messages(), []);
    assert.deepEqual(dump(path), dump(refPath));
    assert.ok((dump(path)['trades']?.length ?? 0) > 100, 'the stream traded');
  });

  test('a store write that fails is retried until it succeeds; what arrives meanwhile joins the next round', async () => {
    const { rec, snapshot, stateHash, path, refPath } = await prepared('retry', 600, 300);
    const logs = memoryLog();
    const follower = new HistoryFollower(
      { store: { kind: 'sqlite', path, options: { busyTimeoutMs: 20 } }, snapshot, stateHash },
      logs.log,
      { gatherMs: 0 },
    );
    // Another connection holds the write lock: the follower's transactions fail as busy.
    const blocker = new DatabaseSync(path);
    blocker.exec('BEGIN EXCLUSIVE');
    const retried = new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (logs.entries().length > 0) {
          clearInterval(poll);
          resolve();
        }
      }, 5);
    });
    follower.enqueue(appliedRange(rec, snapshot.lastSeq, snapshot.lastSeq + 100));
    await retried;
    const [retry] = logs.entries();
    assert.equal(retry?.['level'], 'warn');
    assert.equal(retry?.['msg'], 'history store write failed: retrying');
    assert.match(String(retry?.['reason']), /database is locked/);
    // More commands arrive while the store is locked; they join the next round.
    follower.enqueue(appliedRange(rec, snapshot.lastSeq + 100, rec.seq));
    assert.equal(follower.writtenSeq, snapshot.lastSeq);
    blocker.exec('ROLLBACK');
    blocker.close();
    await follower.drain();
    await follower.close();
    assert.equal(follower.writtenSeq, rec.seq);
    assert.deepEqual(dump(path), dump(refPath));
  });

  test("a replica whose state does not match the engine's stops the follower", async () => {
    const { snapshot, path } = await prepared('hash', 300, 200);
    const follower = new HistoryFollower(
      { store: { kind: 'sqlite', path }, snapshot, stateHash: 'not-the-hash' },
      SILENT_LOG,
    );
    const fatal = new Promise<Error>((resolve) => follower.onFatal(resolve));
    assert.match((await fatal).message, /state hash .* does not match/);
    await assert.rejects(follower.drain(), /does not match/);
    await follower.close().catch(() => undefined);
  });

  test('a gap in the commands handed over, or bytes that are not a command, stop the follower', async () => {
    const { rec, snapshot, stateHash, path } = await prepared('gap', 300, 200);
    const gap = new HistoryFollower({ store: { kind: 'sqlite', path }, snapshot, stateHash }, SILENT_LOG);
    let gapError: Error | undefined;
    gap.onFatal((e) => (gapError = e));
    gap.enqueue(appliedRange(rec, snapshot.lastSeq + 1, snapshot.lastSeq + 3));
    assert.match(gapError?.message ?? '', /does not follow/);
    await gap.close().catch(() => undefined);

    const garbled = new HistoryFollower(
      { store: { kind: 'sqlite', path }, snapshot, stateHash },
      SILENT_LOG,
      {
        gatherMs: 0,
      },
    );
    const fatal = new Promise<Error>((resolve) => garbled.onFatal(resolve));
    const [first] = appliedRange(rec, snapshot.lastSeq, snapshot.lastSeq + 1);
    garbled.enqueue([{ ...(first as AppliedCommand), payload: Uint8Array.of(0x99, 1, 2) }]);
    assert.match((await fatal).message, /does not hold command/);
    await garbled.close().catch(() => undefined);
    const store = SqliteHistoryStore.open(path);
    assert.equal(await store.checkpoint(), snapshot.lastSeq, 'nothing was written');
    await store.close();
  });
});
