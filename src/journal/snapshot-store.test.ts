import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SNAPSHOT_ARRAY_CHUNK_ELEMENTS, SNAPSHOT_HEADER_BYTES, SnapshotStore } from './snapshot-store.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bourse-snapshots-'));
  dirs.push(dir);
  return dir;
}

/** A state shaped like an engine snapshot, with an orders array long enough to be chunked. */
function stateAt(lastSeq: number, orders = 10): Record<string, unknown> {
  return {
    version: 1,
    lastSeq,
    settings: { name: 'bourse', 'quoted "name"': 'ünïcödé ✓' },
    orders: Array.from({ length: orders }, (_, i) => [
      i,
      lastSeq,
      'btc_usdt',
      i % 2,
      'limit',
      100 + i,
      'x'.repeat(i % 7),
    ]),
    empty: [],
    nothing: null,
  };
}

function hashOf(lastSeq: number): string {
  return `hash-${lastSeq}`.padEnd(64, '0');
}

async function writeAt(store: SnapshotStore, lastSeq: number, orders = 10): Promise<string> {
  return store.write(stateAt(lastSeq, orders), { lastSeq, stateHash: hashOf(lastSeq) });
}

function flipBit(file: string, offset: number): void {
  const data = fs.readFileSync(file);
  data[offset] = (data[offset] as number) ^ 0x01;
  fs.writeFileSync(file, data);
}

describe('SnapshotStore', () => {
  it('round-trips a state, chunking a large array, with its metadata', async () => {
    const dir = tempDir();
    const store = new SnapshotStore(dir);
    assert.equal(store.latestValid(), undefined);
    const orders = SNAPSHOT_ARRAY_CHUNK_ELEMENTS * 2 + 17;
    const file = await writeAt(store, 1234, orders);
    assert.equal(path.basename(file), 'snapshot-00000000000000001234.snap');
    const loaded = store.latestValid();
    assert.ok(loaded !== undefined);
    assert.equal(loaded.path, file);
    assert.equal(loaded.lastSeq, 1234);
    assert.equal(loaded.stateHash, hashOf(1234));
    assert.deepEqual(loaded.state, stateAt(1234, orders));
    // The header is one readable line.
    const header = fs.readFileSync(file).subarray(0, SNAPSHOT_HEADER_BYTES).toString();
    assert.match(header, /^\{"format":"bourse-snapshot","version":1,"lastSeq":1234,/);
    assert.deepEqual(store.verifyAll(), []);
    assert.deepEqual(fs.readdirSync(dir), [path.basename(file)]);
    assert.deepEqual(store.load(file), loaded);
    fs.truncateSync(file, fs.statSync(file).size - 1);
    assert.throws(() => store.load(file), /truncated/);
  });

  it('round-trips states that are not plain objects, and a __proto__ key as data', async () => {
    const store = new SnapshotStore(tempDir());
    for (const [i, state] of [[1, 2, 3], 'text', null, 42, { ['__proto__']: { polluted: true } }].entries()) {
      await store.write(state, { lastSeq: i + 1, stateHash: 'h' });
      const loaded = store.latestValid();
      assert.deepEqual(loaded?.state, JSON.parse(JSON.stringify(state)));
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('lists snapshots newest first', async () => {
    const store = new SnapshotStore(tempDir());
    for (const seq of [20, 3, 100]) await writeAt(store, seq);
    assert.deepEqual(
      store.list().map((s) => s.lastSeq),
      [100, 20, 3],
    );
  });

  it('is atomic: a leftover temp file and a truncated newest snapshot are ignored and reported', async () => {
    const dir = tempDir();
    const problems: string[] = [];
    const store = new SnapshotStore(dir, { onProblem: (problem) => problems.push(problem) });
    await writeAt(store, 10, 5000);
    const newest = await writeAt(store, 20, 5000);
    // A crash mid-write leaves a temp file; a crash-like cut leaves a short file.
    fs.writeFileSync(path.join(dir, 'snapshot-00000000000000000030.snap.999-1.tmp'), '{"format":"bourse-sna');
    fs.truncateSync(newest, fs.statSync(newest).size - 100);
    const loaded = store.latestValid();
    assert.equal(loaded?.lastSeq, 10);
    assert.deepEqual(loaded?.state, stateAt(10, 5000));
    assert.equal(problems.length, 2);
    assert.match(problems.join('\n'), /leftover temp file .*\.tmp ignored/);
    assert.match(problems.join('\n'), /snapshot-00000000000000000020\.snap skipped: truncated/);
    // The leftover is no problem for verify (a kill mid-write), and removed on request.
    assert.equal(store.verifyAll().length, 1);
    assert.deepEqual(store.removeLeftovers(), [
      path.join(dir, 'snapshot-00000000000000000030.snap.999-1.tmp'),
    ]);
    assert.deepEqual(store.removeLeftovers(), []);
    // A file cut inside the header is skipped too.
    fs.truncateSync(newest, 100);
    assert.equal(store.latestValid()?.lastSeq, 10);
  });

  it('skips a bit-flipped snapshot, in the body or in the header', async () => {
    const dir = tempDir();
    const problems: string[] = [];
    const store = new SnapshotStore(dir, { onProblem: (problem) => problems.push(problem) });
    await writeAt(store, 1);
    const newest = await writeAt(store, 2);
    const original = fs.readFileSync(newest);
    flipBit(newest, SNAPSHOT_HEADER_BYTES + 40);
    assert.equal(store.latestValid()?.lastSeq, 1);
    assert.match(problems.pop() ?? '', /body checksum mismatch/);
    assert.match(store.verifyAll().join(), /body checksum mismatch/);
    // The state hash sits in the header: a flip there must be caught as well.
    fs.writeFileSync(newest, original);
    const hashAt = original.indexOf('hash-2');
    flipBit(newest, hashAt);
    assert.equal(store.latestValid()?.lastSeq, 1);
    assert.match(problems.pop() ?? '', /header checksum mismatch/);
  });

  it('prune keeps the two newest valid snapshots and removes the rest', async () => {
    const dir = tempDir();
    const store = new SnapshotStore(dir);
    const paths = new Map<number, string>();
    for (const seq of [10, 20, 30, 40, 50]) paths.set(seq, await writeAt(store, seq));
    // The newest is corrupt: it does not count towards the two kept.
    flipBit(paths.get(50) as string, SNAPSHOT_HEADER_BYTES + 5);
    const temp = path.join(dir, 'snapshot-00000000000000000060.snap.1-1.tmp');
    fs.writeFileSync(temp, 'partial');
    const removed = store.prune();
    assert.deepEqual(removed.sort(), [paths.get(50), paths.get(20), paths.get(10), temp].sort());
    assert.deepEqual(
      store.list().map((s) => s.lastSeq),
      [40, 30],
    );
    assert.equal(store.latestValid()?.lastSeq, 40);
    assert.deepEqual(store.prune(2), []);
    assert.deepEqual(store.prune(1), [paths.get(30)]);
  });

  it('prune never removes the only valid snapshots when fewer than keep exist', async () => {
    const store = new SnapshotStore(tempDir());
    await writeAt(store, 7);
    assert.deepEqual(store.prune(2), []);
    assert.equal(store.latestValid()?.lastSeq, 7);
  });

  it('a write replaces a snapshot of the same lastSeq and leaves no temp file', async () => {
    const dir = tempDir();
    const store = new SnapshotStore(dir);
    await store.write({ a: 1 }, { lastSeq: 5, stateHash: 'one' });
    await store.write({ a: 2 }, { lastSeq: 5, stateHash: 'two' });
    assert.deepEqual(store.latestValid()?.state, { a: 2 });
    assert.deepEqual(fs.readdirSync(dir), ['snapshot-00000000000000000005.snap']);
  });

  it('refuses a state hash too long for the header before writing anything', async () => {
    const dir = tempDir();
    const store = new SnapshotStore(dir);
    await assert.rejects(store.write({}, { lastSeq: 1, stateHash: 'x'.repeat(400) }), RangeError);
    assert.deepEqual(fs.readdirSync(dir), []);
  });
});
