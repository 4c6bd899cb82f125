/**
 * @module movement — what the margin domain asks the ledger to do: coin movements between
 * accounts' pockets, and changes of what a borrower owes. The margin modules never hold balances;
 * they return these, and the engine's ledger applies them (each one a bill).
 *
 * ## Accounts
 * `spot(user)`, `isolated(user, market)`, `cross(user)` and the system accounts `lendingPool`,
 * `insurance` and `feeIncome`: the accounts issue 14's ledger is keyed by. Each holds, per coin, an
 * `available` and a `frozen` pocket (assets) and, for margin accounts, `principal` and `interest`
 * owed (liabilities). A lending offer's unlent amount sits in its lender's `frozen` pocket.
 *
 * ## Amounts
 * Every amount is an integer count of the coin's smallest unit held in a safe-integer `number`,
 * as in `src/domain/money.ts`. A movement's amount is always > 0; a debt change may be either sign
 * but never drives what is owed below zero.
 */
import type { ResultName } from '../domain/result-codes.ts';

/** An integer count of a coin's smallest unit (see `src/domain/money.ts`). */
export type Units = number;
/** A time in milliseconds since the epoch, always given by the caller (venue time). */
export type TimeMs = number;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

export type SystemAccount = 'lendingPool' | 'insurance' | 'feeIncome';

export type AccountRef =
  | { readonly kind: 'spot'; readonly userId: number }
  | { readonly kind: 'isolated'; readonly userId: number; readonly market: string }
  | { readonly kind: 'cross'; readonly userId: number }
  | { readonly kind: 'system'; readonly name: SystemAccount };

export const spot = (userId: number): AccountRef => ({ kind: 'spot', userId });
export const isolated = (userId: number, market: string): AccountRef => ({
  kind: 'isolated',
  userId,
  market,
});
export const cross = (userId: number): AccountRef => ({ kind: 'cross', userId });
export const system = (name: SystemAccount): AccountRef => ({ kind: 'system', name });

/** A stable text key of an account, for maps and ordering ("spot:7", "isolated:7:btc_usdt", "system:insurance"). */
export function accountKey(a: AccountRef): string {
  switch (a.kind) {
    case 'spot':
      return `spot:${a.userId}`;
    case 'isolated':
      return `isolated:${a.userId}:${a.market}`;
    case 'cross':
      return `cross:${a.userId}`;
    case 'system':
      return `system:${a.name}`;
  }
}

/** The user an account belongs to, or `undefined` for a system account. */
export function ownerOf(a: AccountRef): number | undefined {
  return a.kind === 'system' ? undefined : a.userId;
}

export type Pocket = 'available' | 'frozen';

/** Why money moved; each kind becomes a bill of the account on both sides. */
export type MovementKind =
  /** A lender's offer is placed or grows (available → frozen of the lender). */
  | 'loanOffer'
  /** A lender cancels the unlent part of an offer (frozen → available of the lender). */
  | 'loanCancel'
  /** Borrowed principal reaches the borrower (lender frozen → borrower available). */
  | 'borrow'
  /** Repaid principal returns to its lender (borrower available → lender available or, re-invested, frozen). */
  | 'repayPrincipal'
  /** Paid interest, the lender's part (borrower available → lender available). */
  | 'repayInterest'
  /** Paid interest, the venue's share (borrower available → insurance available). */
  | 'interestShare'
  /** A liquidation's fee (liquidated account available → insurance available; issue 15). */
  | 'liquidationFee'
  /** The insurance fund covers a liquidation's shortfall (insurance available → liquidated account available). */
  | 'insuranceCover';

export interface Movement {
  readonly kind: MovementKind;
  readonly coin: string;
  readonly amount: Units;
  readonly from: AccountRef;
  readonly fromPocket: Pocket;
  readonly to: AccountRef;
  readonly toPocket: Pocket;
  /** The loan record or offer this movement belongs to. */
  readonly ref: number;
}

export type DebtKind =
  | 'borrow'
  | 'accrue'
  | 'repayPrincipal'
  | 'repayInterest'
  /** Bad debt: what a liquidation could not repay, written off against the lenders (issue 15). */
  | 'writeOff';

/** A change of what a margin account owes in one coin (principal and accrued interest). */
export interface DebtChange {
  readonly kind: DebtKind;
  readonly account: AccountRef;
  readonly coin: string;
  /** Change of principal owed (> 0 borrowing, < 0 repaying). */
  readonly principal: Units;
  /** Change of accrued interest owed (> 0 accrual, < 0 payment). */
  readonly interest: Units;
  /** The loan record. */
  readonly ref: number;
}

/** What one margin operation asks the ledger to apply, in order. */
export interface Effects {
  readonly movements: Movement[];
  readonly debts: DebtChange[];
}

export const noEffects = (): Effects => ({ movements: [], debts: [] });

/** A refusal: the registry's result name and a message with the numbers a user needs. */
export interface Refusal {
  readonly ok: false;
  readonly result: ResultName;
  readonly message: string;
}

export type Outcome<T> = ({ readonly ok: true } & T) | Refusal;

export const refuse = (result: ResultName, message: string): Refusal => ({ ok: false, result, message });
