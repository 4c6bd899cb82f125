/**
 * A restore or reset of a sandbox while a replay plays (docs/sandbox.md, "Save points"), through
 * the save-point routes over a real journal and sequencer, on a clock the test moves: the replay
 * pauses around the restore, so no command of the run being abandoned lands on the restored state,
 * and then goes on from the save's position (a user's order filled since the save is open again
 * and fills again as the history comes round again); a save from before the replay, or a reset,
 * leaves no replay playing; a restart comes back to the same state.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { answering } from '../../src/api/admin/admin-reply.ts';
import { savePointRoutes } from '../../src/api/admin/save-point-routes.ts';
import type { ApiRequest, Route, VenuePort } from '../../src/api/http/types.ts';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import { BUY, type Command } from '../../src/domain/commands.ts';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { Replays } from '../../src/replay/run-replay.ts';
import { SavePoints } from '../../src/sandbox/save-points.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { Sequencer } from '../../src/sequencer/sequencer.ts';
import type { HistoryStore } from '../../src/store/history-store.ts';
import { creditCommand } from '../fixtures/engine-driver.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { T0, writeFiveTrades } from '../fixtures/replay-history.ts';
import { untilTrue } from '../fixtures/until.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-replay-restore-'));
after(() => rmSync(root, { recursive: true, force: true }));

const file = writeFiveTrades(root);

/** A sandbox on `dir` at the test's time: its sequencer, replays and save-point routes (wired as the assembly does). */
async function openVenue(dir: string, clock: () => number) {
  const journal = FileJournal.open(join(dir, 'journal'));
  const recovered = await recover({ genesis: DEFAULT_VENUE, journal, snapshots: undefined, log: SILENT_LOG });
  const sequencer = new Sequencer(recovered.engine, journal, undefined, {
    ...{ clock, maxInFlight: 10_000, snapshotEveryCommands: 0, snapshotEveryMs: 0, keepSnapshots: 2 },
    ...{ pruneJournal: false, log: SILENT_LOG, startTime: recovered.lastTime },
  });
  const engine = recovered.engine;
  const submit = (c: Command) => sequencer.submit(c);
  const replays = new Replays({ engine, submit, now: clock, log: SILENT_LOG });
  const venue: VenuePort = { engine, history: undefined as unknown as HistoryStore, now: clock, submit };
  const routes = new Map<string, Route>(
    savePointRoutes({ venue, saves: { points: new SavePoints(dir), genesis: DEFAULT_VENUE }, replays }).map(
      (r) => [r.path, r],
    ),
  );
  const call = async (path: string, params: Record<string, string> = {}) => {
    const request: ApiRequest = {
      ...{ method: 'POST', path, ip: '127.0.0.1', headers: {}, receivedAt: 0 },
      params: Object.entries(params).map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
    };
    const reply = await answering((routes.get(path) as Route).handler)(request);
    return (reply as { json: Record<string, unknown> }).json;
  };
  const must = async (c: Command) => {
    const r = await submit(c);
    assert.equal(r.result, 'OK', `${c.type}: ${r.message ?? ''}`);
    return r;
  };
  const close = async () => {
    await replays.stop();
    await sequencer.close().catch(() => undefined);
  };
  return { engine, replays, call, must, close };
}

test('a restore while a replay plays: the replay pauses around it and goes on from the save’s position; a restart agrees', async () => {
  const dir = join(root, 'mid');
  let now = T0 + 5 * 3_600_000;
  const clock = () => now;
  const v = await openVenue(dir, clock);
  try {
    const alice = (await v.must({ type: 'RegisterUser', name: 'alice', uniqueIgnoringCase: true }))
      .userId as number;
    await v.must(creditCommand(v.engine, alice, 'usdt', '100000', 'alice-usdt'));
    const replay = await v.replays.start([file]);
    const first = v.replays.player(replay.replayId);
    assert.ok(first !== undefined);
    await untilTrue('the first trade', () => first.progress.played === 1);
    // X: 0.003 bid at 29990, which the second and third trades use up.
    const x = (
      await v.must({
        ...{ type: 'PlaceOrder', userId: alice, market: 'btc_usdt', side: BUY, kind: 'limit' },
        ...{ price: 2_999_000, amount: 30, acctType: 0, clientOrderId: '' },
      })
    ).orderId as number;
    const filled = () => v.engine.openOrder(x)?.filled ?? 'done';
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first trade's ladder applied
    const saved = await v.call('/admin/sandbox/save', { name: 'mid' });
    assert.equal(saved.code, 1000, String(saved.message));

    now += 20_000;
    await untilTrue('the third trade', () => first.progress.played === 3);
    await untilTrue('X used up', () => filled() === 'done');

    const restored = await v.call('/admin/sandbox/restore', { name: 'mid' });
    assert.equal(restored.code, 1000, String(restored.message));
    assert.equal(restored.stateHash, saved.stateHash, 'the saved state, with nothing of the old run on it');
    assert.equal(first.progress.played, 3, 'the old run stopped where it was');
    const resumed = v.replays.player(replay.replayId);
    assert.ok(resumed !== undefined && resumed !== first, 'a new player for the same replay');
    // It goes on from the save's position: the second trade, due at once, fills X's first 0.002 again.
    await untilTrue('the second trade again', () => resumed.progress.played === 2);
    await untilTrue('X filled 0.002 again', () => filled() === 20);
    now += 10_000;
    await untilTrue('the third trade again', () => filled() === 'done');
    now += 30_000;
    await untilTrue('the end', () => resumed.progress.finished);
    await untilTrue('ended', () => v.engine.demo.replays()[0]?.ended !== undefined);
    const [status] = v.replays.status();
    assert.equal(status?.ended?.reason, 'finished');
    assert.equal(status?.ended?.played, 5);
    assert.equal(first.progress.played, 3, 'the old run never went on');
    assert.equal(v.engine.lastPrice('btc_usdt'), 2_998_500, 'the last replayed trade is the last price');

    const hash = v.engine.stateHash();
    await v.close();
    const again = await openVenue(dir, clock);
    assert.equal(again.engine.stateHash(), hash, 'the journal through the restore gives the same state');
    assert.equal(again.replays.player(replay.replayId), undefined, 'nothing left to resume');
    await again.close();
  } finally {
    await v.close();
  }
});

test('a restore to a save from before the replay, or a reset, while it plays: no replay plays afterwards', async () => {
  const dir = join(root, 'before');
  let now = T0 + 5 * 3_600_000;
  const v = await openVenue(dir, () => now);
  try {
    const saved = await v.call('/admin/sandbox/save', { name: 'before' });
    assert.equal(saved.code, 1000, String(saved.message));
    for (const [path, params] of [
      ['/admin/sandbox/restore', { name: 'before' }],
      ['/admin/sandbox/reset', {}],
    ] as const) {
      const replay = await v.replays.start([file]);
      const player = v.replays.player(replay.replayId);
      assert.ok(player !== undefined);
      await untilTrue(`${path}: the first trade`, () => player.progress.played === 1);
      const r = await v.call(path, params);
      assert.equal(r.code, 1000, String(r.message));
      assert.deepEqual(v.replays.status(), [], `${path}: the replay is gone with what happened since`);
      assert.equal(v.replays.player(replay.replayId), undefined);
      const hash = v.engine.stateHash();
      now += 60_000;
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(player.progress.played, 1, `${path}: the stopped player played nothing more`);
      assert.equal(v.engine.stateHash(), hash, `${path}: nothing more is applied`);
    }
  } finally {
    await v.close();
  }
});
