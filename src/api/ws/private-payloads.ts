/**
 * @module private-payloads — the private channels' message texts (zb-api-facts §10.8): order
 * records for `push_user_incr_record`, balances for `push_user_asset` and `push_user_incr_asset`,
 * margin accounts' changes on `push_user_incr_asset`, and `push_user_cross_asset`. Field values come from the same
 * mappers as the REST order record and getAccountInfo, so a push and a REST read agree.
 */
import type { AcctType, OrderKind, Side } from '../../domain/commands.ts';
import type { OrderStatus } from '../../domain/events.ts';
import { formatUnits, unitsToNumber } from '../../domain/money.ts';
import type { CoinSpec, MarketSpec } from '../../domain/specs.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { coinBalanceRecord } from '../http/signed/account.ts';
import { formatRiskRate } from '../wire/margin-wire.ts';
import { crossAssetsResult, crossRisk } from '../http/signed/margin-views.ts';
import { orderRecord } from '../http/signed/order-record.ts';

/** What does not change over an order's life (from its OrderAccepted, or the engine's view of it). */
export interface OrderFacts {
  readonly id: number;
  readonly market: string;
  readonly side: Side;
  readonly kind: OrderKind;
  readonly price: number;
  readonly amount: number;
  readonly acctType: AcctType;
  readonly clientOrderId: string;
  readonly usePlatformCoin: boolean;
  /** Placement time, ms. */
  readonly time: number;
}

/** An order's state after a change (an OrderUpdated has every field). */
export interface OrderProgress {
  readonly status: OrderStatus;
  readonly filled: number;
  readonly filledValue: number;
  readonly fees: number;
  readonly platformFees: number;
  /** 0 (and the three after it 0) when the latest fill is not known: before any, or in a snapshot. */
  readonly lastTradeId: number;
  readonly lastTradePrice: number;
  readonly lastTradeAmount: number;
  readonly lastTradeTime: number;
  /** Time of the change, ms. */
  readonly time: number;
}

/**
 * The flat record array of §10.8, one order:
 * `[0 id (string), 1 price, 2 amount, 3 filled amount, 4 filled value (quote), 5 type code
 * (0/1 limit, 2/3 PostOnly, 4/5 IOC; odd = buy), 6 placement time (ms), 7 status (0 pending,
 * 1 cancelled, 2 done, 3 partly filled), 8 fee, 9 acctType, 10 useZbFee, 11 customerOrderId
 * ("" when none), 12 time of this change (ms), 13 latest fill's trade id, 14 its price, 15 its
 * amount, 16 its time (ms)]`. Indices 0–8 and 13–16 are the reference's; 9–12 (unknown there)
 * are Bourse's. Amounts and prices are JSON numbers at the market's scales; the fee is in the coin
 * the REST order record names (`useZbFee`: the platform coin).
 */
export function recordArray(
  engine: VenueState,
  spec: MarketSpec,
  facts: OrderFacts,
  progress: OrderProgress,
): string {
  const r = orderRecord(engine, spec, { ...facts, ...progress, time: facts.time });
  const hasFill = progress.lastTradeId > 0;
  return (
    `[${JSON.stringify(r.id)},${r.price},${r.total_amount},${r.trade_amount},${r.trade_money},${r.type},` +
    `${r.trade_date},${r.status},${r.fees},${r.acctType},${r.useZbFee},${JSON.stringify(facts.clientOrderId)},` +
    `${progress.time},${progress.lastTradeId},` +
    `${hasFill ? unitsToNumber(progress.lastTradePrice, spec.priceScale) : 0},` +
    `${hasFill ? unitsToNumber(progress.lastTradeAmount, spec.amountScale) : 0},${progress.lastTradeTime}]`
  );
}

/** An order's progress before any fill: pending, nothing filled. */
export function unfilled(time: number): OrderProgress {
  return {
    status: 0,
    filled: 0,
    filledValue: 0,
    fees: 0,
    platformFees: 0,
    lastTradeId: 0,
    lastTradePrice: 0,
    lastTradeAmount: 0,
    lastTradeTime: 0,
    time,
  };
}

/** `{"market":"btcusdtdefault","record":[…one order…],"channel":"push_user_incr_record","dataType":"userIncrRecord"}`. */
export function incrRecordMessage(marketParam: string, record: string): string {
  return `{"market":${JSON.stringify(marketParam)},"record":${record},"channel":"push_user_incr_record","dataType":"userIncrRecord"}`;
}

/**
 * The snapshot on subscribe: every open order of the user in the market, oldest first, as
 * `{"market":"btcusdtdefault","records":[[…],[…]],"channel":"push_user_incr_record","dataType":"userRecord"}`.
 */
export function recordSnapshotMessage(marketParam: string, records: readonly string[]): string {
  return `{"market":${JSON.stringify(marketParam)},"records":[${records.join(',')}],"channel":"push_user_incr_record","dataType":"userRecord"}`;
}

/**
 * `{"coins":[<getAccountInfo coin>,…],"dataType":…,"channel":…,"version":<seq>}`: the user's
 * balances of `coins`; `version` is the journal sequence number the balances are as of.
 */
export function assetMessage(
  engine: VenueState,
  userId: number,
  coins: readonly CoinSpec[],
  dataType: 'userAsset' | 'userIncrAsset',
  channel: string,
): string {
  const list = coins.map((coin) => coinBalanceRecord(engine, userId, coin));
  return JSON.stringify({ coins: list, dataType, channel, version: engine.lastSeq });
}

/** The changed-account keys of the margin pushes: `isolated:<market>` and `cross`. */
export const ISOLATED_PREFIX = 'isolated:';
export const CROSS_KEY = 'cross';

/** A margin account's risk state as its pushes show it (issue 15). */
export interface RiskState {
  /** 1 normal, 2 flagged at the notice line, 3 locked for liquidation (cross: at the liquidation line). */
  readonly level: 1 | 2 | 3;
  readonly repayLock: boolean;
  /** As getLeverAssetsInfo / getCrossAssets show it: 4 decimals rounded down, "-" without debt. */
  readonly riskRate: string;
  /** The account's newest liquidation (its record is in the bills), null when it never had one. */
  readonly lastLiquidation: {
    readonly id: number;
    readonly status: 'running' | 'done';
    readonly startTime: number;
    readonly endTime: number;
  } | null;
}

/** The newest liquidation record of `isolated:<market>` or `cross`, as RiskState shows it. */
function lastLiquidation(engine: VenueState, userId: number, account: string): RiskState['lastLiquidation'] {
  const market = account.startsWith(ISOLATED_PREFIX) ? account.slice(ISOLATED_PREFIX.length) : undefined;
  const records = engine.risk.liquidations(userId);
  for (let i = records.length - 1; i >= 0; i--) {
    const r = records[i];
    if (r === undefined) continue;
    if (
      market === undefined ? r.account.kind === 'cross' : r.account.kind === 'isolated' && r.market === market
    )
      return { id: r.id, status: r.status, startTime: r.startMs, endTime: r.endMs };
  }
  return null;
}

/** The risk state of `isolated:<market>` or `cross`, as getLeverAssetsInfo / getCrossAssets show it. */
export function riskState(engine: VenueState, userId: number, account: string): RiskState | undefined {
  if (account.startsWith(ISOLATED_PREFIX)) {
    const market = account.slice(ISOLATED_PREFIX.length);
    const risk = engine.risk.accountRisk(userId, market);
    if (risk === undefined) return undefined;
    const view = engine.margin.account(userId, 1, market);
    return {
      level: risk.level,
      repayLock: risk.repayLock,
      riskRate: formatRiskRate(risk.riskRateBp ?? view?.riskRateBp),
      lastLiquidation: lastLiquidation(engine, userId, account),
    };
  }
  const view = engine.margin.account(userId, 2, '');
  const risk = crossRisk(engine, userId);
  return {
    level: risk.level,
    repayLock: risk.repayLock,
    riskRate: formatRiskRate(risk.riskRateBp ?? view?.riskRateBp),
    lastLiquidation: lastLiquidation(engine, userId, account),
  };
}

/**
 * A margin account's changed coins on `push_user_incr_asset` (issue 14; the reference does not
 * know the channel's layout):
 * `{"coins":[…],"acctType":1,"marketName":"btcusdt","level":1,"repayLock":false,"riskRate":"1.3307","lastLiquidation":null,"dataType":"userIncrAsset","channel":"push_user_incr_asset","version":<seq>}`.
 * `acctType` 1 (isolated, `marketName` the market without underscore) or 2 (cross, `marketName`
 * ""); a spot message has neither field. Each coin is getAccountInfo's coin record with the
 * margin account's `available` and `freez`, plus `loanIn` (principal owed) and `overdraft`
 * (interest owed), decimal text with the coin's decimals; and the account's `level`, `repayLock`,
 * `riskRate` and `lastLiquidation` (issue 15, `RiskState`): the notice flag is level 2. `undefined` for an account the
 * engine does not know (never expected).
 */
export function marginAssetMessage(
  engine: VenueState,
  userId: number,
  account: string,
  coins: ReadonlySet<string>,
): string | undefined {
  const isolated = account.startsWith(ISOLATED_PREFIX);
  const market = isolated ? account.slice(ISOLATED_PREFIX.length) : '';
  const view = engine.margin.account(userId, isolated ? 1 : 2, market);
  if (view === undefined) return undefined;
  const list = engine
    .coins()
    .filter((c) => coins.has(c.name))
    .map((coin) => {
      const c = view.coins.find((x) => x.coin === coin.name);
      const units = (u: number | undefined): string => formatUnits(u ?? 0, coin.unitDecimal);
      return {
        ...coinBalanceRecord(engine, userId, coin),
        available: units(c?.available),
        freez: units(c?.frozen),
        loanIn: units(c?.borrowed),
        overdraft: units(c?.interest),
      };
    });
  const risk = riskState(engine, userId, account);
  return JSON.stringify({
    coins: list,
    acctType: isolated ? 1 : 2,
    marketName: market.replace('_', ''),
    ...risk,
    dataType: 'userIncrAsset',
    channel: 'push_user_incr_asset',
    version: engine.lastSeq,
  });
}

/**
 * `push_user_cross_asset` (issue 14; the reference does not know its layout): getCrossAssets'
 * `result` (JSON numbers, uppercase keys: `loanIn`, `total`, `riskRate`, `net`, `list`) with
 * `dataType` "userCrossAsset", `channel` and `version` (the journal sequence it is as of). Sent
 * on subscribe and whenever a balance of the cross account changes.
 */
export function crossAssetMessage(engine: VenueState, userId: number): string {
  return JSON.stringify({
    ...crossAssetsResult(engine, userId),
    dataType: 'userCrossAsset',
    channel: 'push_user_cross_asset',
    version: engine.lastSeq,
  });
}
