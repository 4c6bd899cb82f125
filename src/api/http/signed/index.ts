/** @module signed — the signed trade API (`/api/<method>`): trading, order queries, account and funds endpoints, mounted by the HTTP server as `signedRoutes(deps)`. */
import { Authenticator } from '../../auth/authenticate.ts';
import { MemoryRateLimiter, type RateLimiter } from '../../auth/rate-limit.ts';
import type { SecretSealer } from '../../auth/secret-sealing.ts';
import { SILENT_LOG } from '../../../observability/memory-log.ts';
import type { Log } from '../../../domain/log.ts';
import type { Route, VenuePort } from '../types.ts';
import { ACCOUNT_ENDPOINTS } from './account.ts';
import { ADDRESS_ENDPOINTS } from './addresses.ts';
import { FAUCET_ENDPOINTS } from './faucet.ts';
import { FUND_RECORD_ENDPOINTS } from './fund-records.ts';
import { MARGIN_ENDPOINTS } from './margin.ts';
import { MARGIN_VIEW_ENDPOINTS } from './margin-views.ts';
import { ORDER_QUERY_ENDPOINTS } from './order-queries.ts';
import { REPORT_ENDPOINTS } from './report.ts';
import { signedRoute, type SignedEndpoint } from './pipeline.ts';
import { SUB_ACCOUNT_ENDPOINTS } from './sub-accounts.ts';
import { TRADING_ENDPOINTS } from './trading.ts';
import { WITHDRAW_ENDPOINTS } from './withdraw.ts';

/** Default longest wait for the history store to catch up before a history read (ms). */
export const DEFAULT_HISTORY_WAIT_MS = 2_000;

export interface SignedRoutesDeps {
  readonly venue: VenuePort;
  /** Opens the engine's sealed secrets (the master key's sealer). */
  readonly sealer: SecretSealer;
  /** Default: an in-memory limiter with the spec's limits on the venue's clock. */
  readonly rateLimiter?: RateLimiter;
  /** Allowed |reqTime − arrival| in ms; default 10,000. */
  readonly reqTimeWindowMs?: number;
  /** Longest wait for history to reach the engine's state before a history read; default 2,000 ms. */
  readonly historyWaitMs?: number;
  /** Unexpected failures and refusals (pipeline.ts); default: nowhere. */
  readonly log?: Log;
}

/** Every signed endpoint, with the permission it needs. */
export const SIGNED_ENDPOINTS: readonly SignedEndpoint[] = [
  ...TRADING_ENDPOINTS,
  ...ORDER_QUERY_ENDPOINTS,
  ...ACCOUNT_ENDPOINTS,
  ...ADDRESS_ENDPOINTS,
  ...FUND_RECORD_ENDPOINTS,
  ...WITHDRAW_ENDPOINTS,
  ...FAUCET_ENDPOINTS,
  ...MARGIN_ENDPOINTS,
  ...MARGIN_VIEW_ENDPOINTS,
  ...SUB_ACCOUNT_ENDPOINTS,
  ...REPORT_ENDPOINTS,
];

/**
 * The routes of the signed trade API, one per endpoint at `/api/<method>`. They share one
 * authenticator (and its secret cache) and one rate limiter. Every reply is HTTP 200 with JSON;
 * errors are `{"code":<code>,"message":"<text>"}` (docs/trading-api.md).
 */
export function signedRoutes(deps: SignedRoutesDeps): Route[] {
  const authenticator = new Authenticator(
    deps.venue,
    deps.sealer,
    deps.reqTimeWindowMs === undefined ? {} : { reqTimeWindowMs: deps.reqTimeWindowMs },
  );
  const services = {
    venue: deps.venue,
    authenticator,
    limiter: deps.rateLimiter ?? new MemoryRateLimiter({ clock: () => deps.venue.now() }),
    historyWaitMs: deps.historyWaitMs ?? DEFAULT_HISTORY_WAIT_MS,
    sealer: deps.sealer,
    log: deps.log ?? SILENT_LOG,
  };
  return SIGNED_ENDPOINTS.map((endpoint) => signedRoute(endpoint, services));
}
