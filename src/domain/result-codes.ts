/**
 * @module result-codes — the one registry of outcomes: each engine or gateway result name maps to
 * the interface's wire code and a clear message. docs/errors.md is kept in sync by a test.
 *
 * Codes follow the real API's (docs/zb-reference.md §3) so that existing clients classify them as
 * they did against the real API (ccxt: 2009 → InsufficientFunds, 3001 → OrderNotFound, …).
 * A name is never reused for another meaning.
 */

/** The real API's text for a withdrawal address that is not added and verified (ccxt: InvalidAddress). */
export const UNVERIFIED_ADDRESS_TEXT = '提币地址有误, 请先添加提币地址。';

export interface ResultInfo {
  /** The wire `code`. */
  readonly code: number;
  /** The default message; callers may add detail (which parameter, which limit). */
  readonly message: string;
}

export const RESULTS = {
  OK: { code: 1000, message: 'success' },
  GENERAL_ERROR: { code: 1001, message: 'request failed' },
  DEPOSIT_ADDRESS_MISSING: {
    code: 1001,
    message: 'no deposit address yet: it must first be created (the operator runs bourse address create)',
  },
  WITHDRAW_ADDRESS_UNVERIFIED: {
    code: 1001,
    message: `${UNVERIFIED_ADDRESS_TEXT} (withdrawal address wrong: add it and have it verified first)`,
  },
  DAILY_WITHDRAW_LIMIT: { code: 1001, message: 'daily withdrawal limit of this coin exceeded' },
  FAUCET_LIMIT: { code: 1001, message: "the demo faucet's hourly allowance of this coin is used up" },
  INTERNAL_ERROR: { code: 1002, message: 'internal error' },
  AUTH_FAILED: { code: 1003, message: 'verification failed: unknown access key or bad signature' },
  FUND_PASSWORD_LOCKED: {
    code: 1004,
    message: 'fund password locked after too many wrong attempts; retry after 24 hours',
  },
  FUND_PASSWORD_WRONG: { code: 1005, message: 'fund password wrong' },
  WS_CHANNEL_EMPTY: { code: 1007, message: 'Channel is empty' },
  WS_EVENT_EMPTY: { code: 1008, message: 'event is empty' },
  MARKET_HALTED: { code: 1009, message: 'market is halted' },
  NOT_ACCEPTED: {
    code: 1009,
    message:
      'not accepted: the server stopped (its journal could not be written) before this command was made durable; check its effect once the server is back before sending it again',
  },
  PERMISSION_DENIED: {
    code: 1012,
    message: 'permission denied: the API key lacks the permission this call needs',
  },
  INSUFFICIENT_BALANCE: { code: 2009, message: 'insufficient account balance' },
  ORDER_NOT_FOUND: { code: 3001, message: 'order not found or already completed' },
  INVALID_PRICE: { code: 3002, message: 'invalid price' },
  INVALID_AMOUNT: { code: 3003, message: 'invalid amount' },
  BELOW_MIN_WITHDRAW: { code: 3003, message: 'amount below the minimum withdrawal of the chain' },
  BELOW_MIN_SIZE: { code: 3002, message: 'order value below the market minimum (minSize)' },
  BELOW_MIN_AMOUNT: { code: 3003, message: 'amount below the market minimum (minAmount)' },
  USER_NOT_FOUND: { code: 3004, message: 'user does not exist' },
  INVALID_PARAMETER: { code: 3005, message: 'invalid parameter' },
  UNKNOWN_MARKET: { code: 3005, message: 'unknown market' },
  UNKNOWN_COIN: { code: 3005, message: 'unknown coin' },
  RETIRED_COIN_NAME: { code: 3005, message: 'coin name is retired' },
  ACCOUNT_TYPE_NOT_SUPPORTED: { code: 3005, message: 'acctType not supported yet: only 0 (spot) is open' },
  VALUE_OUT_OF_RANGE: { code: 3005, message: 'value out of the exact range' },
  IP_NOT_BOUND: { code: 3006, message: 'request IP is not bound to this API key' },
  REQUEST_EXPIRED: { code: 3007, message: 'reqTime invalid or outside the allowed window' },
  REQUEST_REPLAYED: {
    code: 3007,
    message: 'request already received: this API key accepts each signed request once',
  },
  POST_ONLY_WOULD_TAKE: { code: 3011, message: 'PostOnly order would take liquidity and was refused' },
  DUPLICATE_REFERENCE: { code: 3005, message: 'business id already used for a different operation' },
  UNKNOWN_REFERENCE: { code: 3005, message: 'no operation with this business id' },
  INVALID_STATE: { code: 3005, message: 'operation not allowed in the current state' },
  DEPOSIT_DISABLED: { code: 3005, message: 'deposits of this coin are switched off' },
  WITHDRAW_DISABLED: { code: 3005, message: 'withdrawals of this coin are switched off' },
  WRONG_WITHDRAW_FEE: { code: 3005, message: "fees must equal the chain's withdrawal fee" },
  MARGIN_NOT_OPEN: { code: 3005, message: 'margin is not open on this market or coin' },
  LOAN_NOT_FOUND: { code: 3005, message: 'unknown lending offer or loan record' },
  INVALID_LOAN_TERM: { code: 3005, message: 'repaymentDay must be one of the allowed terms' },
  LOAN_RATE_OUT_OF_RANGE: { code: 3005, message: 'interestRateOfDay is outside the allowed range' },
  BELOW_MIN_LOAN: { code: 3003, message: 'amount below the minimum lending amount of the coin' },
  LENDING_SHORT: { code: 2009, message: 'not enough lending offers to lend this amount' },
  OVER_BORROW_LIMIT: { code: 2009, message: 'amount over the borrowing limit of the margin account' },
  OVER_TRANSFER_LIMIT: {
    code: 2009,
    message: 'transfer would leave the margin account below the opening line',
  },
  OVER_ORDER_LIMIT: {
    code: 2009,
    message:
      'margin order priced so far from the mark that a fill would leave the account below the opening line',
  },
  REPAY_OVER_OWED: { code: 3003, message: 'repay amount exceeds what is owed' },
  ACCOUNT_FROZEN: {
    code: 4001,
    message:
      'account frozen by the operator: orders and withdrawals are refused; reads and cancels still work',
  },
  BUSY: { code: 4001, message: 'server busy, retry shortly' },
  RATE_LIMITED: { code: 4002, message: 'requests too frequent' },
} as const satisfies Record<string, ResultInfo>;

export type ResultName = keyof typeof RESULTS;
