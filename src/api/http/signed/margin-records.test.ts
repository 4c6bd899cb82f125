/**
 * Loan records and repayments after many borrow and repay cycles (issue 29, item 7): the engine
 * keeps the open records only (its snapshot no closed record and no repayment), the history store
 * the rest, and the signed API answers exactly as main did when the engine kept them all
 * (test/golden/margin-records.json: main's answers at e189e75 to the same run).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { marginRecordsRun, RECORD_CYCLES } from '../../../../test/fixtures/margin-records-run.ts';

interface Golden {
  readonly sha256: Record<string, string>;
  readonly full: Record<string, unknown>;
}

const GOLDEN = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../../../test/golden/margin-records.json'), 'utf8'),
) as Golden;

const sha256 = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

describe('loan records and repayments out of the engine', () => {
  test('the engine holds the open records only; every read answers as before, from the history store', async () => {
    const { answers, h } = await marginRecordsRun();
    const engine = h.venue.engine;
    // 30 cycles made 50 records; every fifth cycle left its records open, until the next cycle of
    // the account repaid all it owed: the last cycle's two are open.
    const open = [...engine.margin.openLoans()];
    assert.equal(RECORD_CYCLES % 5, 0);
    assert.equal(open.length, 2, 'open records');
    assert.ok(open.every((l) => l.status === 1));
    const margin = (engine.snapshot() as unknown as { margin: Record<string, unknown> }).margin;
    assert.deepEqual(
      (margin.loans as { loans: { id: number }[] }).loans.map((l) => l.id),
      open.map((l) => l.id),
      'the snapshot carries the open records only',
    );
    assert.equal(margin.repayments, undefined, 'and no repayment');
    const userId = engine.userId('alice') as number;
    assert.equal((await h.venue.history.loansBorrowed(userId, { limit: 1000 })).length, 50 - open.length);
    // The answers, call by call, against main's.
    assert.deepEqual(Object.keys(answers), Object.keys(GOLDEN.sha256));
    for (const [name, answer] of Object.entries(answers)) {
      if (name in GOLDEN.full) assert.deepEqual(answer, GOLDEN.full[name], name);
      assert.equal(sha256(answer), GOLDEN.sha256[name], `${name}: ${JSON.stringify(answer).slice(0, 2000)}`);
    }
    // With the history store lagging (as a real projection does), a record closed by the last
    // command is still listed, closed: the reads wait for the store to reach the engine.
    h.venue.awaitHistory = false;
    const alice = await h.key(userId);
    // The last cycle's records are the cross account's.
    await h.venue.must({ type: 'RepayAll', userId, acctType: 2, market: '', coin: 'usdt', amount: 'all' });
    assert.equal([...engine.margin.openLoans()].length, 0);
    const listed = (await h.call('getLoanRecords', alice, { pageSize: '100' })) as {
      result: { id: number }[];
    };
    assert.equal(listed.result.length, 50);
    assert.deepEqual(
      listed.result.slice(0, 2).map((r) => r.id),
      open.map((l) => l.id).reverse(),
    );
    const closed = (await h.call('getLoanRecords', alice, { status: '2', pageSize: '100' })) as {
      result: unknown[];
    };
    assert.equal(closed.result.length, 50, 'every record closed, the last two included');
  });
});
