/**
 * @module chains — the funds vocabulary: the chains each coin moves on (fees, minimums, required
 * confirmations, memo use), per-coin withdrawal limits, the deposit and withdrawal state machines,
 * and how their states appear on the wire. docs/funds.md tells the whole story.
 */
import { parseDecimal, type CoinUnits } from './money.ts';
import type { CoinSpec } from './specs.ts';

/** One chain a coin moves on (the interface's "blockChain" / getFeeInfo's chainName). */
export interface ChainSpec {
  /** The chain's name as getFeeInfo shows it ('ERC20', 'TRC20', 'BTC'); unique within its coin. */
  readonly name: string;
  /** The network it runs on (getFeeInfo's mainChainName: 'ETH', 'TRX', 'BTC'). */
  readonly mainChain: string;
  /**
   * true: deposits go to one shared account plus a memo (tag) per user, written `<account>_<memo>`
   * on the wire; false: each user has an address of their own.
   */
  readonly memo: boolean;
  /** Confirmations after which a deposit is credited and a withdrawal has succeeded (≥ 1). */
  readonly confirmations: number;
  /** The network fee a withdrawal pays, in coin units: withdraw's `fees` must equal it. */
  readonly withdrawFee: CoinUnits;
  /** The smallest withdrawal, in coin units (≥ 1). */
  readonly minWithdraw: CoinUnits;
  readonly canDeposit: boolean;
  readonly canWithdraw: boolean;
}

/** How a coin's funds move: its chains (the first is its default) and its withdrawal limits. */
export interface CoinFunds {
  readonly coin: string;
  readonly chains: readonly ChainSpec[];
  /** The most one user may withdraw per UTC day, in coin units. */
  readonly dailyWithdrawLimit: CoinUnits;
  /** Withdrawals up to this amount are approved at once; larger ones wait for the operator (0: all wait). */
  readonly autoApproveLimit: CoinUnits;
}

/** A deposit's life: seen on chain and confirming, then credited or failed. */
export type DepositState = 'confirming' | 'credited' | 'failed';

/**
 * A withdrawal's life: submitted (funds frozen) → approved (by the operator, or at once under the
 * coin's autoApproveLimit) → sending (claimed by the chain adapter; no longer cancellable) → sent
 * (broadcast, with a transaction hash) → confirmed (in a block) → succeeded (the chain's required
 * confirmations: the funds leave the books). failed (from approved on: funds released) and
 * cancelled (before sending, by the user or the operator: funds released) end it early.
 */
export type WithdrawalState =
  'submitted' | 'approved' | 'sending' | 'sent' | 'confirmed' | 'succeeded' | 'failed' | 'cancelled';

/** Every withdrawal state, in the order of the happy path, then the two early ends. */
export const WITHDRAWAL_STATES: readonly WithdrawalState[] = [
  'submitted',
  'approved',
  'sending',
  'sent',
  'confirmed',
  'succeeded',
  'failed',
  'cancelled',
];

/** States whose funds are still frozen: the withdrawal is in progress. */
export function isPendingWithdrawal(state: WithdrawalState): boolean {
  return state !== 'succeeded' && state !== 'failed' && state !== 'cancelled';
}

/** The deposit record's `status`: 0 waiting for confirmation, 1 failed, 2 succeeded. */
export const DEPOSIT_WIRE_STATUS: Readonly<Record<DepositState, number>> = {
  confirming: 0,
  failed: 1,
  credited: 2,
};

/** The withdrawal record's `status`: 0 submitted (until it is in a block), 5 confirmed, 2, 1, 3. */
export const WITHDRAWAL_WIRE_STATUS: Readonly<Record<WithdrawalState, number>> = {
  submitted: 0,
  approved: 0,
  sending: 0,
  sent: 0,
  confirmed: 5,
  succeeded: 2,
  failed: 1,
  cancelled: 3,
};

/** Wrong fund passwords allowed within FUND_PASSWORD_WINDOW_MS; the next locks withdrawals. */
export const FUND_PASSWORD_MAX_FAILURES = 5;
export const FUND_PASSWORD_WINDOW_MS = 24 * 3_600_000;
export const FUND_PASSWORD_LOCK_MS = 24 * 3_600_000;
/** The daily withdrawal limit counts per UTC day of this length. */
export const DAY_MS = 86_400_000;

/**
 * An address or memo account: letters, digits and `. : -` (no `_`, which separates the memo in
 * the wire form, and no space), 1 to 100 characters.
 */
export const ADDRESS_TEXT = /^[A-Za-z0-9.:-]{1,100}$/;
/** A memo (tag): letters, digits, `.` and `-`, 1 to 27 characters. */
export const MEMO_TEXT = /^[A-Za-z0-9.-]{1,27}$/;
/** A transaction hash: letters and digits (hex, with or without 0x), 8 to 100 characters. */
export const TX_HASH = /^[A-Za-z0-9]{8,100}$/;
/** Longest reason or remark a funds command may carry. */
export const MAX_NOTE_LENGTH = 200;
/** Chain names: letters and digits, as the interface shows them ('ERC20'). */
export const CHAIN_NAME = /^[A-Z][A-Z0-9]{0,15}$/;

/** Separates account and memo in the wire form of a memo chain's address. */
export const MEMO_SEPARATOR = '_';

/** The wire form of an address: `<account>_<memo>` on memo chains, the address otherwise. */
export function joinAddress(address: string, memo: string): string {
  return memo === '' ? address : `${address}${MEMO_SEPARATOR}${memo}`;
}

/**
 * Splits and checks a wire-form address of a chain: `<account>_<memo>` on memo chains, the
 * address alone otherwise. `undefined` when it is not of that form (see ADDRESS_TEXT, MEMO_TEXT).
 */
export function splitAddress(
  text: string,
  memoChain: boolean,
): { address: string; memo: string } | undefined {
  if (typeof text !== 'string') return undefined;
  if (!memoChain) return ADDRESS_TEXT.test(text) ? { address: text, memo: '' } : undefined;
  const i = text.indexOf(MEMO_SEPARATOR);
  const address = text.slice(0, i);
  const memo = text.slice(i + 1);
  return i > 0 && ADDRESS_TEXT.test(address) && MEMO_TEXT.test(memo) ? { address, memo } : undefined;
}

/** The key a chain deposit is applied once under: (coin, chain, transaction, output). */
export function chainDepositId(coin: string, chain: string, txHash: string, output: number): string {
  return `chain:${coin}/${chain}/${txHash}/${output}`;
}

/** The deposit record an internal transfer leaves on the receiving side. */
export function internalDepositId(withdrawalId: string): string {
  return `internal:${withdrawalId}`;
}

/** Deposit ids of these forms are made by the engine; an operator credit may not use them. */
export const RESERVED_DEPOSIT_ID = /^(chain|internal):/;

/** Checks one coin's funds configuration against the coins. Returns the problems (empty: valid). */
export function validateCoinFunds(f: CoinFunds, coins: ReadonlyMap<string, CoinSpec>): string[] {
  const problems: string[] = [];
  const at = `funds of ${f.coin}`;
  if (!coins.has(f.coin)) problems.push(`${at}: unknown coin`);
  if (!Array.isArray(f.chains) || f.chains.length === 0) problems.push(`${at}: at least one chain`);
  const units = (name: string, v: number, min: number): void => {
    if (!Number.isSafeInteger(v) || v < min) problems.push(`${at}: ${name} must be an integer ≥ ${min}`);
  };
  units('dailyWithdrawLimit', f.dailyWithdrawLimit, 1);
  units('autoApproveLimit', f.autoApproveLimit, 0);
  const seen = new Set<string>();
  for (const c of f.chains ?? []) {
    if (typeof c.name !== 'string' || !CHAIN_NAME.test(c.name))
      problems.push(`${at}: chain name '${String(c.name)}' must be capital letters and digits`);
    else if (seen.has(c.name)) problems.push(`${at}: chain ${c.name} twice`);
    seen.add(c.name);
    if (typeof c.mainChain !== 'string' || !CHAIN_NAME.test(c.mainChain))
      problems.push(`${at}/${c.name}: mainChain must be capital letters and digits`);
    if (
      typeof c.memo !== 'boolean' ||
      typeof c.canDeposit !== 'boolean' ||
      typeof c.canWithdraw !== 'boolean'
    )
      problems.push(`${at}/${c.name}: memo, canDeposit and canWithdraw must be booleans`);
    if (!Number.isInteger(c.confirmations) || c.confirmations < 1 || c.confirmations > 10_000)
      problems.push(`${at}/${c.name}: confirmations must be 1..10000`);
    units(`${c.name} withdrawFee`, c.withdrawFee, 0);
    units(`${c.name} minWithdraw`, c.minWithdraw, 1);
  }
  return problems;
}

/** Builds a coin's funds configuration from decimal text (for configuration files and tests). */
export function coinFundsFromText(
  spec: {
    coin: string;
    dailyWithdrawLimit: string;
    autoApproveLimit: string;
    chains: readonly {
      name: string;
      mainChain: string;
      memo?: boolean;
      confirmations: number;
      withdrawFee: string;
      minWithdraw: string;
    }[];
  },
  unitDecimal: number,
): CoinFunds {
  const units = (what: string, text: string): CoinUnits => {
    const v = parseDecimal(text, unitDecimal);
    if (v === undefined)
      throw new Error(`funds of ${spec.coin}: ${what} '${text}' is not a ${unitDecimal}-decimal amount`);
    return v;
  };
  return {
    coin: spec.coin,
    dailyWithdrawLimit: units('dailyWithdrawLimit', spec.dailyWithdrawLimit),
    autoApproveLimit: units('autoApproveLimit', spec.autoApproveLimit),
    chains: spec.chains.map((c) => ({
      name: c.name,
      mainChain: c.mainChain,
      memo: c.memo ?? false,
      confirmations: c.confirmations,
      withdrawFee: units(`${c.name} withdrawFee`, c.withdrawFee),
      minWithdraw: units(`${c.name} minWithdraw`, c.minWithdraw),
      canDeposit: true,
      canWithdraw: true,
    })),
  };
}
