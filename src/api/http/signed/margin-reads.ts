/**
 * @module margin-reads — what the margin endpoints read of the engine's margin state, as one small
 * interface (issue 14). The engine's margin module provides it (brief M1); until a venue has it,
 * `marginReads` answers `undefined` and the reads answer as for an account with nothing in it.
 */
import type { Engine } from '../../../engine/engine.ts';
import type { LoanOffer } from '../../../margin/lending-book.ts';
import type { LoanRecord, RepaymentRecord } from '../../../margin/loans.ts';

export interface MarginReadPort {
  /** One loan record by id. */
  loan(loanId: number): LoanRecord | undefined;
  /** Open offers of a coin with something left to lend, cheapest first (ties: older first). */
  offers(coin: string): readonly LoanOffer[];
  /** The payments of one loan record, oldest first. */
  repayments(loanId: number): readonly RepaymentRecord[];
}

/** The engine's margin reads, when it has them. */
export function marginReads(engine: Engine): MarginReadPort | undefined {
  return (engine as unknown as { readonly margin?: MarginReadPort }).margin;
}
