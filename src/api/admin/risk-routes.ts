/**
 * @module risk-routes — the operator's view of the risk side (issue 15, used by `bourse liquidations`
 * and `bourse insurance`): the liquidation records, and the insurance fund per coin with what fed
 * it and what it paid. Read-only, under the admin token. Records are the engine's (the same shape
 * as the user's bills carry, src/api/wire/liquidation-wire.ts) plus the owner's name. A bad parameter,
 * an unknown user, market, coin or record is refused (3004/3005/3003) with a message naming it.
 */
import { formatBigUnitsTrim } from '../../domain/money.ts';
import type { CoinBooks } from '../../engine/books.ts';
import type { LiquidationRecord } from '../../margin/liquidation.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { liquidationOf } from '../http/signed/margin-views.ts';
import { param, type Route, type VenuePort } from '../http/types.ts';
import { plainInteger } from '../edge/readers.ts';
import { fail, ok } from './admin-reply.ts';
import { engineReader } from './venue-reader.ts';
import { coinParam, DEFAULT_LIST_LIMIT, marketParam, paging, userParam } from './views-routes.ts';
import { quoted } from '../edge/refusal.ts';

/** The paths of risk-routes (all read-only: the audit log does not record them). */
export const RISK_READ_PATHS: readonly string[] = [
  '/admin/liquidations/list',
  '/admin/liquidations/show',
  '/admin/insurance',
];

const STATUSES = ['running', 'done'] as const;

const ownerOf = (r: LiquidationRecord): number => (r.account.kind === 'system' ? 0 : r.account.userId);

/** A record as the operator sees it: the wire record plus the owner's name. */
function recordRow(engine: VenueState, r: LiquidationRecord): Record<string, unknown> {
  return { ...liquidationOf(engine, r), user: engine.userName(ownerOf(r)) ?? '' };
}

export function riskAdminRoutes(deps: { readonly venue: VenuePort }): Route[] {
  const engine = deps.venue.engine;
  const reader = engineReader(engine);
  return [
    {
      /**
       * [user] (name or id), [market], [status: running|done], [limit], [offset]: liquidation
       * records, newest first.
       */
      path: '/admin/liquidations/list',
      handler: (request) => {
        const userText = param(request, 'user');
        const user =
          userText === undefined || userText === '' ? undefined : userParam(engine, reader, request);
        const market = marketParam(engine, request);
        const statusText = param(request, 'status');
        if (
          statusText !== undefined &&
          statusText !== '' &&
          !(STATUSES as readonly string[]).includes(statusText)
        ) {
          fail('INVALID_PARAMETER', `status ${quoted(statusText)} must be one of ${STATUSES.join(', ')}`);
        }
        const page = paging(request, DEFAULT_LIST_LIMIT);
        const found = engine
          .liquidations()
          .filter(
            (r) =>
              (user === undefined || ownerOf(r) === user.userId) &&
              (market === undefined || r.market === market.name) &&
              (statusText === undefined || statusText === '' || r.status === statusText),
          )
          .reverse();
        return ok({
          total: found.length,
          limit: page.limit,
          offset: page.offset,
          liquidations: found.slice(page.offset, page.offset + page.limit).map((r) => recordRow(engine, r)),
        });
      },
    },
    {
      /** id: one liquidation record in full. */
      path: '/admin/liquidations/show',
      handler: (request) => {
        const text = param(request, 'id') ?? '';
        const id = plainInteger(text) ?? 0;
        if (id < 1) fail('INVALID_PARAMETER', `id ${quoted(text)} must be a liquidation number (1, 2, …)`);
        const record = engine.liquidations().find((r) => r.id === id);
        if (record === undefined) fail('INVALID_PARAMETER', `no liquidation ${text}`);
        return ok({ liquidation: recordRow(engine, record) });
      },
    },
    {
      /**
       * [coin]: per coin, the insurance fund's balance; what fed it (the venue's share of interest,
       * liquidation fees) and what it paid (shortfalls covered); the bad debt written off against
       * lenders beyond it; and how many liquidations there were.
       */
      path: '/admin/insurance',
      handler: (request) => {
        const only = coinParam(engine, request);
        const records = engine.liquidations();
        const coins = only === undefined ? engine.coins() : [only];
        return ok({
          liquidations: records.length,
          running: records.filter((r) => r.status === 'running').length,
          coins: coins.map((c) => {
            // The same sums as the solvency view's (src/engine/books.ts).
            const b = engine.books(c.name) as CoinBooks;
            const f = (n: bigint): string => formatBigUnitsTrim(n, c.unitDecimal);
            return {
              coin: c.name,
              available: f(b.insurance.available),
              interestShare: f(b.insuranceInterestShare),
              liquidationFees: f(b.insuranceLiquidationFees),
              covered: f(b.insuranceCover),
              badDebt: f(b.badDebt),
            };
          }),
        });
      },
    },
  ];
}
