/**
 * @module lending-routes — the operator's lending API (issue 14, under the admin token, used by
 * `bourse lending fund`): funding the platform lending pool, the default lender of a fresh venue.
 * The call is journaled (FundLendingPool) and, as every admin action, audited. A refused call
 * changes nothing: an unknown coin 3005, an amount that is not a positive decimal of the coin 3003,
 * a rate outside the coin's bounds or a term not allowed 3005 (docs/margin.md).
 */
import { randomUUID } from 'node:crypto';
import { formatUnitsTrim, parseDecimal } from '../../domain/money.ts';
import {
  checkRate,
  checkTerm,
  defaultLendingSettings,
  formatRatePercent,
  parseRatePercent,
} from '../../margin/settings.ts';
import { param, paramText, type Route, type VenuePort } from '../http/types.ts';
import { plainInteger, readAnyCaseCoin } from '../edge/readers.ts';
import { fail, fromResult } from './admin-reply.ts';
import { quoted } from '../edge/refusal.ts';

/** Longest funding reference accepted. */
const MAX_REF_LENGTH = 64;

export function lendingAdminRoutes(deps: { readonly venue: VenuePort }): Route[] {
  const { venue } = deps;
  return [
    {
      /**
       * coin (any case), amount (decimal of the coin), rate (percent per day, e.g. 0.05), days (a
       * term of the coin: 10, 20 or 30), [ref: a retry with it changes nothing]. Credits the pool
       * and offers the amount at once, rolling over.
       */
      path: '/admin/lending/fund',
      handler: async (request) => {
        const coin = readAnyCaseCoin(venue.engine, 'coin', paramText(request, 'coin'));
        const lending = defaultLendingSettings(coin.name, coin.unitDecimal);
        const amountText = param(request, 'amount') ?? '';
        const amount = parseDecimal(amountText, coin.unitDecimal);
        if (amount === undefined || amount <= 0) {
          fail(
            'INVALID_AMOUNT',
            `amount ${quoted(amountText)} must be a positive decimal with at most ${coin.unitDecimal} decimals, ` +
              `at most ${formatUnitsTrim(Number.MAX_SAFE_INTEGER, coin.unitDecimal)} ${coin.name}`,
          );
        }
        const rateText = param(request, 'rate') ?? '';
        const dailyRatePpm = parseRatePercent(rateText);
        if (dailyRatePpm === undefined) {
          fail(
            'INVALID_PARAMETER',
            `rate ${quoted(rateText)} must be a percent per day with at most 4 decimals, e.g. 0.05 ` +
              `(${formatRatePercent(lending.minDailyRatePpm)} to ${formatRatePercent(lending.maxDailyRatePpm)})`,
          );
        }
        const rate = checkRate(lending, dailyRatePpm);
        if (!rate.ok) fail(rate.result, rate.message.replace('interestRateOfDay', 'rate'));
        const daysText = param(request, 'days') ?? '';
        const days = plainInteger(daysText) ?? NaN;
        if (!checkTerm(lending, days).ok) {
          fail(
            'INVALID_LOAN_TERM',
            `days ${quoted(daysText)} must be one of ${lending.termsDays.join(', ')}`,
          );
        }
        const ref = param(request, 'ref') ?? randomUUID();
        if (ref.length === 0 || ref.length > MAX_REF_LENGTH) {
          fail('INVALID_PARAMETER', `ref must be 1 to ${MAX_REF_LENGTH} characters`);
        }
        const fundingId = `operator:${ref}`;
        const r = await venue.submit({
          type: 'FundLendingPool',
          fundingId,
          coin: coin.name,
          amount,
          dailyRatePpm,
          days,
        });
        return fromResult(r, {
          fundingId,
          duplicate: r.duplicate === true,
          coin: coin.name,
          amount: formatUnitsTrim(amount, coin.unitDecimal),
          rate: formatRatePercent(dailyRatePpm),
          days,
        });
      },
    },
  ];
}
