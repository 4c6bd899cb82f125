/**
 * @module margin-steps — the scenario grammar's margin steps (issue 14), parsed here so that the
 * runner only hands them what they need. Amounts are decimal text at the coin's scale; a daily rate
 * is a percent per day as the API takes it (`0.05%` = 500 ppm); an account is `isolated <market>`
 * or `cross`.
 *
 * Actions (each may end in `-> ok` / `-> refused RESULT ["text"]` / `-> duplicate`):
 *
 *     operator funds the lending pool with 100000 usdt at 0.05% for 10 days [id f1]
 *     alice moves 1000 usdt to isolated btc_usdt | to cross          spot → margin
 *     alice moves 250 usdt from isolated btc_usdt | from cross       margin → spot (above the line)
 *     alice lends 1000 usdt at 0.06% for 10 days [rolling over]      an offer from her spot account
 *     alice borrows 4000 usdt in isolated btc_usdt [at most 0.05%] [for 10 days] [rolling over]
 *     alice repays 10 usdt of loan 1 | alice repays all of loan 1    one loan record (ids count from 1)
 *     alice repays 100 usdt in cross | alice repays all usdt in isolated btc_usdt   all loans of a coin
 *     alice turns express on in isolated btc_usdt | turns auto-repay off in cross   the account's defaults
 *
 * Orders take `acct 1` / `acct 2` and `express` (see the runner's order options).
 *
 * Expectations:
 *
 *     margin alice isolated btc_usdt usdt: available 1000 frozen 0 borrowed 500 interest 0.010416
 *     borrow limit alice isolated btc_usdt usdt: 4000
 *     transfer limit alice isolated btc_usdt usdt: 874.98698   what may be moved out (couldTransferOut…)
 *     pool usdt: unlent 100000 lent 0                  the lending pool's offers of the coin
 *     loan 1: status 1 principal 500 interest 0.010416     statuses as the interface lists them
 *
 * The risk side's expectations (marks, risk rates and levels, liquidation records, the insurance
 * fund) are in risk-steps.ts.
 */
import type { LoanRecord } from '../../src/margin/loans.ts';
import type { Command } from '../../src/domain/commands.ts';
import { parseDecimal } from '../../src/domain/money.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { parseRiskStep } from './risk-steps.ts';

/** What a margin step needs of the running scenario. */
export interface MarginPort {
  readonly engine: Engine;
  /** The user's id, registering the name the first time. */
  userId(name: string): number;
  /** Decimal text → units of the coin (a malformed scenario throws). */
  coinUnits(text: string, coin: string): number;
  /** A loan record, open (the engine's) or closed (from its LoanClosed event). */
  loan(loanId: number): LoanRecord | undefined;
  /** A loan id as the scenario names it. */
  fail(message: string): never;
}

export type MarginStep =
  | { readonly kind: 'marginAction'; readonly build: (port: MarginPort) => Command }
  | { readonly kind: 'marginExpect'; readonly check: (port: MarginPort) => void };

const ACCOUNT = String.raw`(isolated (\S+)|cross)`;

/** `isolated <market>` / `cross` → acctType and market. */
const account = (isolatedMarket: string | undefined): { acctType: 1 | 2; market: string } =>
  isolatedMarket === undefined ? { acctType: 2, market: '' } : { acctType: 1, market: isolatedMarket };

/** `0.05%` → 500 ppm (a percent per day with at most 4 decimals). */
function ratePpm(text: string, port: MarginPort): number {
  return parseDecimal(text, 4) ?? port.fail(`rate '${text}%' must be a percent with at most 4 decimals`);
}

/** Parses one margin step, or returns undefined when the line is not one. */
export function parseMarginStep(body: string): MarginStep | undefined {
  let m: RegExpExecArray | null;
  const action = (build: (port: MarginPort) => Command): MarginStep => ({ kind: 'marginAction', build });
  if (
    (m = /^operator funds the lending pool with (\S+) (\S+) at (\S+)% for (\d+) days(?: id (\S+))?$/.exec(
      body,
    ))
  ) {
    const [, amount, coin, rate, days, id] = m as unknown as [
      string,
      string,
      string,
      string,
      string,
      string?,
    ];
    return action((p) => ({
      type: 'FundLendingPool',
      fundingId: id ?? `scenario-fund-${amount}-${coin}-${rate}-${days}`,
      coin,
      amount: p.coinUnits(amount, coin),
      dailyRatePpm: ratePpm(rate, p),
      days: Number(days),
    }));
  }
  if ((m = new RegExp(String.raw`^(\S+) moves (\S+) (\S+) (to|from) ${ACCOUNT}$`).exec(body))) {
    const [, user, amount, coin, way, , market] = m as unknown as string[];
    return action((p) => ({
      type: 'MarginTransfer',
      userId: p.userId(user as string),
      direction: way === 'to' ? 'in' : 'out',
      ...account(market),
      coin: coin as string,
      amount: p.coinUnits(amount as string, coin as string),
    }));
  }
  if ((m = /^(\S+) lends (\S+) (\S+) at (\S+)% for (\d+) days( rolling over)?$/.exec(body))) {
    const [, user, amount, coin, rate, days, loop] = m as unknown as string[];
    return action((p) => ({
      type: 'PlaceLoanOffer',
      userId: p.userId(user as string),
      coin: coin as string,
      amount: p.coinUnits(amount as string, coin as string),
      dailyRatePpm: ratePpm(rate as string, p),
      days: Number(days),
      loop: loop !== undefined,
    }));
  }
  if (
    (m = new RegExp(
      String.raw`^(\S+) borrows (\S+) (\S+) in ${ACCOUNT}(?: at most (\S+)%)?(?: for (\d+) days)?( rolling over)?$`,
    ).exec(body))
  ) {
    const [, user, amount, coin, , market, rate, days, roll] = m as unknown as (string | undefined)[];
    return action((p) => ({
      type: 'Borrow',
      userId: p.userId(user as string),
      ...account(market),
      coin: coin as string,
      amount: p.coinUnits(amount as string, coin as string),
      ...(rate === undefined ? {} : { maxDailyRatePpm: ratePpm(rate, p) }),
      ...(days === undefined ? {} : { days: Number(days) }),
      rollOver: roll !== undefined,
    }));
  }
  if ((m = /^(\S+) repays (?:all|(\S+) (\S+)) of loan (\d+)$/.exec(body))) {
    const [, user, amount, coin, loanId] = m as unknown as (string | undefined)[];
    return action((p) => ({
      type: 'RepayLoan',
      userId: p.userId(user as string),
      loanId: Number(loanId),
      amount: amount === undefined ? 'all' : p.coinUnits(amount, coin as string),
    }));
  }
  if ((m = new RegExp(String.raw`^(\S+) repays (?:all (\S+)|(\S+) (\S+)) in ${ACCOUNT}$`).exec(body))) {
    const [, user, allCoin, amount, coin, , market] = m as unknown as (string | undefined)[];
    return action((p) => ({
      type: 'RepayAll',
      userId: p.userId(user as string),
      ...account(market),
      coin: (allCoin ?? coin) as string,
      amount: amount === undefined ? 'all' : p.coinUnits(amount, coin as string),
    }));
  }
  if ((m = new RegExp(String.raw`^(\S+) turns (express|auto-repay) (on|off) in ${ACCOUNT}$`).exec(body))) {
    const [, user, what, on, , market] = m as unknown as (string | undefined)[];
    return action((p) => ({
      type: 'SetMarginPreferences',
      userId: p.userId(user as string),
      ...account(market),
      ...(what === 'express' ? { express: on === 'on' } : { autoRepay: on === 'on' }),
    }));
  }
  if (
    (m = new RegExp(
      String.raw`^margin (\S+) ${ACCOUNT} (\S+): available (\S+) frozen (\S+) borrowed (\S+) interest (\S+)$`,
    ).exec(body))
  ) {
    const [, user, , market, coin, ...amounts] = m as unknown as (string | undefined)[];
    return {
      kind: 'marginExpect',
      check: (p) => {
        const { acctType, market: name } = account(market);
        const view = p.engine.margin.account(p.userId(user as string), acctType, name);
        const c = view?.coins.find((x) => x.coin === coin);
        const actual = [c?.available ?? 0, c?.frozen ?? 0, c?.borrowed ?? 0, c?.interest ?? 0];
        const expected = amounts.map((a) => p.coinUnits(a as string, coin as string));
        if (actual.join() !== expected.join())
          p.fail(
            `available, frozen, borrowed, interest in units: expected ${expected.join(', ')}, got ${actual.join(', ')}`,
          );
      },
    };
  }
  if ((m = new RegExp(String.raw`^borrow limit (\S+) ${ACCOUNT} (\S+): (\S+)$`).exec(body))) {
    const [, user, , market, coin, limit] = m as unknown as (string | undefined)[];
    return {
      kind: 'marginExpect',
      check: (p) => {
        const { acctType, market: name } = account(market);
        const view = p.engine.margin.account(p.userId(user as string), acctType, name);
        const actual = view?.coins.find((x) => x.coin === coin)?.borrowLimit ?? 0;
        const expected = p.coinUnits(limit as string, coin as string);
        if (actual !== expected) p.fail(`borrow limit in units: expected ${expected}, got ${actual}`);
      },
    };
  }
  if ((m = new RegExp(String.raw`^transfer limit (\S+) ${ACCOUNT} (\S+): (\S+)$`).exec(body))) {
    const [, user, , market, coin, limit] = m as unknown as (string | undefined)[];
    return {
      kind: 'marginExpect',
      check: (p) => {
        const { acctType, market: name } = account(market);
        const view = p.engine.margin.account(p.userId(user as string), acctType, name);
        const actual = view?.coins.find((x) => x.coin === coin)?.transferOutLimit ?? 0;
        const expected = p.coinUnits(limit as string, coin as string);
        if (actual !== expected) p.fail(`transfer limit in units: expected ${expected}, got ${actual}`);
      },
    };
  }
  if ((m = /^pool (\S+): unlent (\S+) lent (\S+)$/.exec(body))) {
    const [, coin, unlent, lent] = m as unknown as [string, string, string, string];
    return {
      kind: 'marginExpect',
      check: (p) => {
        const offers = p.engine.margin.poolOffers().filter((o) => o.coin === coin);
        const actual = [
          offers.reduce((s, o) => s + o.remaining, 0),
          offers.reduce((s, o) => s + o.lentOut, 0),
        ];
        const expected = [p.coinUnits(unlent, coin), p.coinUnits(lent, coin)];
        if (actual.join() !== expected.join())
          p.fail(
            `pool ${coin} unlent, lent (units): expected ${expected.join(', ')}, got ${actual.join(', ')}`,
          );
      },
    };
  }
  if ((m = /^loan (\d+): status (\d) principal (\S+) interest (\S+)$/.exec(body))) {
    const [, id, status, principal, interest] = m as unknown as string[];
    return {
      kind: 'marginExpect',
      check: (p) => {
        const loan = p.loan(Number(id)) ?? p.fail(`no loan ${id}`);
        const actual = [loan.status, loan.principal, loan.interestOwed];
        const expected = [
          Number(status),
          p.coinUnits(principal as string, loan.coin),
          p.coinUnits(interest as string, loan.coin),
        ];
        if (actual.join() !== expected.join())
          p.fail(
            `loan ${id} status, principal, interest owed (units): expected ${expected.join(', ')}, got ${actual.join(', ')}`,
          );
      },
    };
  }
  return parseRiskStep(body);
}
