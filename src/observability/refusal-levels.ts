/**
 * @module refusal-levels — the log level of each refusal at the edge (docs/operations.md, "Logs"):
 * what an operator should see by default (someone trying keys, permissions or fund passwords) is
 * `warn`; a client's clock is `info`; a client's own mistakes and the market's answers
 * (insufficient balance, unknown order, a bad price) are `debug`, so that a busy venue's log at
 * the default level holds no per-order lines. A rate-limit lock and a busy spell are logged once
 * where they begin (the limiter, the sequencer), and each request refused meanwhile at `debug`.
 */
import type { ResultName } from '../domain/result-codes.ts';
import type { Log, LogLevel } from '../domain/log.ts';

const LEVELS: Partial<Record<ResultName, LogLevel>> = {
  AUTH_FAILED: 'warn',
  IP_NOT_BOUND: 'warn',
  PERMISSION_DENIED: 'warn',
  FUND_PASSWORD_WRONG: 'warn',
  FUND_PASSWORD_LOCKED: 'warn',
  REQUEST_EXPIRED: 'info',
  INTERNAL_ERROR: 'error',
};

/** The level a refusal with `result` is logged at; `debug` unless listed above. */
export function refusalLevel(result: ResultName): LogLevel {
  return LEVELS[result] ?? 'debug';
}

/** Logs one refusal at its level; builds nothing when that level is off. */
export function logRefusal(log: Log, result: ResultName, fields: () => object, message: string): void {
  const level = refusalLevel(result);
  if (log.isLevelEnabled(level)) log[level]({ result, ...fields() }, message);
}
