/**
 * Loan records in the engine after issue 29: closed records and repayments leave it (LoanClosed,
 * LoanRepaid), a snapshot carries the open records only, a replay from it is exact, and a snapshot
 * written before the change (main at e189e75, every record and repayment in it) still loads into the
 * same state as the new code reaches by the same commands.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Command } from '../../src/domain/commands.ts';
import { EngineRecorder } from '../../src/store/trading-stream.ts';
import { Engine } from '../../src/engine/engine.ts';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import type { VenueConfig } from '../../src/domain/specs.ts';
import type { EngineSnapshot } from '../../src/engine/snapshot.ts';

const T0 = Date.UTC(2024, 0, 1);
const HOUR = 3_600_000;

/** Four cycles of borrow, an hour, part repaid, the rest repaid (but the last): the old snapshot's run. */
function cycles(config: VenueConfig = DEFAULT_VENUE): EngineRecorder {
  const rec = new EngineRecorder(T0, config);
  const alice = rec.fundedUser('alice', { usdt: 100_000_000_000 });
  const must = (cmd: Command, at = rec.time + 1000): Record<string, unknown> => {
    const r = rec.apply(cmd, at);
    assert.equal(r.result, 'OK', `${cmd.type}: ${r.message ?? ''}`);
    return r as unknown as Record<string, unknown>;
  };
  must({
    type: 'FundLendingPool',
    fundingId: 'p',
    coin: 'usdt',
    amount: 50_000_000_000,
    dailyRatePpm: 700,
    days: 10,
  });
  const account = { userId: alice, acctType: 1, market: 'btc_usdt', coin: 'usdt' } as const;
  must({ type: 'MarginTransfer', direction: 'in', ...account, amount: 10_000_000_000 });
  for (let i = 0; i < 4; i++) {
    const ids = must({ type: 'Borrow', ...account, amount: 1_000_000_000, rollOver: false })
      .loanIds as number[];
    must({ type: 'FireTimers' }, rec.time + HOUR);
    must({ type: 'RepayLoan', userId: alice, loanId: ids[0] as number, amount: 10_000_000 });
    if (i < 3) must({ type: 'RepayAll', ...account, amount: 'all' });
  }
  return rec;
}

const marginOf = (s: EngineSnapshot): Record<string, unknown> =>
  (s as unknown as { margin: Record<string, unknown> }).margin;

describe('loan records out of the engine (issue 29)', () => {
  test('closed records and repayments are events; the snapshot keeps the open record; replay is exact', () => {
    const rec = cycles();
    const events = rec.entries.flatMap((e) => e.events);
    assert.deepEqual(
      events.filter((e) => e.type === 'LoanClosed').map((e) => [e.loan.id, e.loan.status, e.loan.principal]),
      [
        [1, 2, 0],
        [2, 2, 0],
        [3, 2, 0],
      ],
    );
    assert.equal(events.filter((e) => e.type === 'LoanRepaid').length, 7);
    assert.deepEqual(
      [...rec.engine.margin.openLoans()].map((l) => l.id),
      [4],
    );
    assert.equal(rec.engine.margin.loan(1), undefined);
    const snapshot = rec.engine.snapshot();
    const loans = marginOf(snapshot).loans as { loans: { id: number }[]; lenderTotals: unknown };
    assert.deepEqual(
      loans.loans.map((l) => l.id),
      [4],
    );
    assert.equal(marginOf(snapshot).repayments, undefined);
    // Replay: the restored engine and the live one take the same commands to the same state.
    const restored = Engine.restore(JSON.parse(JSON.stringify(snapshot)) as EngineSnapshot);
    assert.equal(restored.stateHash(), rec.engine.stateHash());
    const next = {
      type: 'RepayAll',
      userId: 1,
      acctType: 1,
      market: 'btc_usdt',
      coin: 'usdt',
      amount: 'all',
    } as const;
    const a = rec.apply(next, rec.time + HOUR);
    const b = restored.apply({ ...next, seq: rec.seq, time: rec.time });
    assert.deepEqual(b.events, a.events);
    assert.equal(restored.stateHash(), rec.engine.stateHash());
    assert.ok(a.events.some((e) => e.type === 'LoanClosed' && e.loan.id === 4));
  });

  test("a snapshot written before issue 29 (main's, every record in it) loads into the new state", () => {
    const old = JSON.parse(
      readFileSync(join(import.meta.dirname, 'margin-snapshot-e189e75.json'), 'utf8'),
    ) as EngineSnapshot;
    const oldMargin = marginOf(old);
    assert.equal((oldMargin.loans as { loans: unknown[] }).loans.length, 4, 'main kept the closed records');
    assert.ok(Array.isArray(oldMargin.repayments), 'and the repayments');
    // A genesis from before issue 29 has no markRule (it keeps issue 15's median mark).
    const { markRule: _, ...settings } = DEFAULT_VENUE.settings;
    const rec = cycles({ ...DEFAULT_VENUE, settings });
    const restored = Engine.restore(old);
    assert.deepEqual(restored.snapshot(), rec.engine.snapshot());
    assert.equal(restored.stateHash(), rec.engine.stateHash());
  });
});
