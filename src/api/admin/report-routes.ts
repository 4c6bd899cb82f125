/**
 * @module report-routes — the bot author's report under the admin token (`bourse report`,
 * src/report/, docs/sandbox.md): a user's fills, fees, P&L, turnover, largest drawdown and value
 * over time on one market over a period. It only reads.
 */
import { quoted } from '../edge/refusal.ts';
import { ReportError, readReport } from '../../report/report-source.ts';
import { param, type Route, type VenuePort } from '../http/types.ts';
import { fail, ok, userOf } from './admin-reply.ts';
import { awaitHistory } from './views-routes.ts';

/** A time parameter: whole ms since 1970, or `fallback` when absent. */
function timeParam<T>(text: string | undefined, name: string, fallback: T): number | T {
  if (text === undefined || text === '') return fallback;
  if (!/^\d{1,16}$/.test(text))
    fail('INVALID_PARAMETER', `${name} ${quoted(text)} must be a time in ms since 1970`);
  return Number(text);
}

export function reportRoutes(deps: { readonly venue: VenuePort }): Route[] {
  const { venue } = deps;
  return [
    {
      path: '/admin/report',
      handler: async (request) => {
        const userId = userOf(venue, request);
        const from = timeParam(param(request, 'from'), 'from', undefined); // the first bill
        const to = timeParam(param(request, 'to'), 'to', venue.now());
        const market = param(request, 'market') || undefined;
        // The bills of what the engine has applied, as the views read them.
        await awaitHistory(venue);
        try {
          const report = await readReport(venue, userId, market, from, to);
          return ok({ user: venue.engine.userName(userId), ...report });
        } catch (error) {
          if (error instanceof ReportError) fail('INVALID_PARAMETER', error.message);
          throw error;
        }
      },
    },
  ];
}
