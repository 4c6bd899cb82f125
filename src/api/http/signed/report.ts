/**
 * @module report — the bot author's report as a signed endpoint (a Bourse extension, issue 35;
 * assetPerm): the signed-in user's fills, fees, profit and loss, turnover, largest drawdown and
 * account value over time on one market (src/report/, docs/sandbox.md). The trading page's Report
 * tab charts it; `bourse report` gives the operator the same for any user.
 */
import type { Args } from '../../edge/endpoint.ts';
import { integer, MARKET, optional } from '../../edge/readers.ts';
import { Refusal, successBody } from '../../edge/refusal.ts';
import { ReportError, readReport } from '../../../report/report-source.ts';
import type { ApiReply } from '../types.ts';
import { awaitHistory, signedEndpoint, type SignedContext, type SignedEndpoint } from './pipeline.ts';

/** ms since 1970 up to the year 9999. */
const TIME = optional(integer(0, 253_402_300_799_999));
const REPORT_PARAMS = { market: MARKET, from: TIME, to: TIME };

/**
 * `getAccountReport`: market (`btc_usdt`), from and to (ms, optional: the user's first bill, and
 * now). Reply `{"code":1000,"message":"success", …the report}` (docs/sandbox.md lists the fields).
 * Refusals: 3005 for an unknown market or a period that ends before it starts.
 */
async function getAccountReport(ctx: SignedContext, args: Args<typeof REPORT_PARAMS>): Promise<ApiReply> {
  await awaitHistory(ctx);
  try {
    const report = await readReport(
      ctx.venue,
      ctx.userId,
      args.market.name,
      args.from,
      args.to ?? ctx.venue.now(),
    );
    return { json: successBody(report) };
  } catch (error) {
    if (error instanceof ReportError) throw new Refusal('INVALID_PARAMETER', error.message);
    throw error;
  }
}

export const REPORT_ENDPOINTS: readonly SignedEndpoint[] = [
  signedEndpoint({
    method: 'getAccountReport',
    permission: 'asset',
    params: REPORT_PARAMS,
    handler: getAccountReport,
  }),
];
