import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_VENUE } from '../config/default-venue.ts';
import { Engine } from '../engine/engine.ts';
import { chooseBootMode, recoveryStart, type BootFacts } from './boot-mode.ts';

const FRESH: BootFacts = {
  standby: undefined,
  writesHistory: true,
  historySeq: 0,
  snapshotSeq: 0,
  journalComplete: true,
};

test('the boot mode is named from what the venue finds', () => {
  assert.deepEqual(chooseBootMode(FRESH), { kind: 'clean' });
  assert.deepEqual(chooseBootMode({ ...FRESH, historySeq: 900, snapshotSeq: 500 }), {
    kind: 'from-snapshot',
    snapshotSeq: 500,
  });
  // History behind the snapshot, journal whole: rebuild from genesis, snapshots ignored.
  const rebuild = chooseBootMode({ ...FRESH, historySeq: 100, snapshotSeq: 500 });
  assert.deepEqual(rebuild, { kind: 'from-journal', historySeq: 100, snapshotSeq: 500 });
  assert.deepEqual(recoveryStart(rebuild), { ignoreSnapshots: true });
  // The journal was pruned: nothing to rebuild from; start from the snapshot (the history is lost).
  assert.equal(
    chooseBootMode({ ...FRESH, historySeq: 100, snapshotSeq: 500, journalComplete: false }).kind,
    'from-snapshot',
  );
  // Another process writes history: never rebuilt here.
  assert.equal(
    chooseBootMode({ ...FRESH, writesHistory: false, historySeq: 100, snapshotSeq: 500 }).kind,
    'from-snapshot',
  );
});

test('a standby starts from its replica, unless history must be rebuilt', () => {
  const engine = new Engine(DEFAULT_VENUE);
  const standby = chooseBootMode({ ...FRESH, standby: engine, historySeq: 500, snapshotSeq: 500 });
  assert.equal(standby.kind, 'from-standby');
  assert.equal(recoveryStart(standby).from, engine);
  assert.equal(
    chooseBootMode({ ...FRESH, standby: engine, historySeq: 10, snapshotSeq: 500 }).kind,
    'from-journal',
  );
});
