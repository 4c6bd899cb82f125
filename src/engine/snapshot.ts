/**
 * @module snapshot — the plain-data form of the whole engine state, and its encoding: each module
 * (registry, ledger, matching, dead-man switch, funds, demo) gives and takes its part here.
 *
 * Canonical: ids, names and keys sorted, so two engines in the same state give identical
 * snapshots (and state hashes) however they got there.
 *
 * ## Versions
 * - 2: deposits, withdrawals and lifetime totals in `funds`, with addresses and passwords.
 * - 3: as 2, plus `marginAccounts` and `systemAccounts` (the lending pool and insurance). Written
 *   only when the ledger holds such an account, so a spot-only venue still writes version 2 with
 *   exactly the bytes (and state hash) it wrote before the ledger existed; both are read. A
 *   version-2 reader refuses a version-3 snapshot rather than drop its margin accounts.
 * - 4: as 3, plus `margin`: lending offers, loan records, repayments, preferences, pool funding and
 *   the interest timer (src/engine/margin.ts). Written only once anything margin happened; 2 and 3
 *   are still read (their margin part is empty).
 */
import type { AcctType, OrderKind, Side, UserStatus } from '../domain/commands.ts';
import type { KeyPermissions } from '../domain/commands.ts';
import type { CoinUnits, Lots, PriceTicks } from '../domain/money.ts';
import type { Risk, RiskSnapshot } from './risk.ts';
import type { CoinSpec, MarketSpec, VenueConfig, VenueSettings } from '../domain/specs.ts';
import type { DeadManSwitch } from './dead-man.ts';
import type { Demo, DemoSnapshot } from './demo-state.ts';
import type { Funds, FundsSnapshot } from './funds.ts';
import { AVAILABLE, FROZEN } from './balance-store.ts';
import { loadBalances, type Ledger, type MarginAccountEntry, type SystemAccountEntry } from './ledger.ts';
import type { Margin, MarginSnapshot } from './margin.ts';
import type { Matching } from './matching.ts';
import { Order } from './order-book.ts';
import type { ApiKeyRecord, Registry } from './registry.ts';
import type { Settlement } from './settlement.ts';
import type { SubAccounts } from './sub-accounts.ts';

/** The version a spot-only state is written with (its layout has not changed since). */
export const SNAPSHOT_VERSION = 2;
/** The version of a snapshot that holds margin or system accounts. */
export const SNAPSHOT_VERSION_ACCOUNTS = 3;
/** The version of a snapshot that holds margin state (lending, loans). */
export const SNAPSHOT_VERSION_MARGIN = 4;
const READABLE_VERSIONS: readonly number[] = [
  SNAPSHOT_VERSION,
  SNAPSHOT_VERSION_ACCOUNTS,
  SNAPSHOT_VERSION_MARGIN,
];

/** A resting order as a tuple (compact for large books). */
export type SnapshotOrder = [
  id: number,
  userId: number,
  market: string,
  side: Side,
  kind: OrderKind,
  price: PriceTicks,
  amount: Lots,
  remaining: Lots,
  filled: Lots,
  filledValue: CoinUnits,
  fees: CoinUnits,
  platformFees: CoinUnits,
  frozen: CoinUnits,
  time: number,
  clientOrderId: string,
  acctType: AcctType,
  usePlatformCoin: boolean,
  lastTradeId: number,
  lastTradePrice: PriceTicks,
  lastTradeAmount: Lots,
  lastTradeTime: number,
];

export interface EngineSnapshot {
  readonly version: number;
  /** Sequence number of the last command the state includes. */
  readonly lastSeq: number;
  readonly settings: VenueSettings;
  readonly coins: CoinSpec[];
  readonly markets: { spec: MarketSpec; lastPrice: number }[];
  readonly nextUserId: number;
  readonly nextOrderId: number;
  readonly nextTradeId: number;
  /** [userId, name, usePlatformCoin, spot available per coin, spot frozen per coin] */
  readonly users: [number, string, boolean, CoinUnits[], CoinUnits[]][];
  readonly orders: SnapshotOrder[];
  readonly clientIds: [string, number][];
  readonly deadlines: [string, number][];
  readonly apiKeys: [
    string,
    {
      userId: number;
      accessKey: string;
      sealedSecret: string;
      permissions: KeyPermissions;
      ips: readonly string[];
    },
  ][];
  /** The fee income account's balance per coin. */
  readonly feeIncome: CoinUnits[];
  /** Funds configuration, addresses, fund passwords, deposits, withdrawals and lifetime totals. */
  readonly funds: FundsSnapshot;
  /** The demo market's state; absent on a venue that never started it (its hash unchanged). */
  readonly demo?: DemoSnapshot | undefined;
  /** Version 3: isolated and cross accounts, sorted by kind, user and market. */
  readonly marginAccounts?: MarginAccountEntry[];
  /** Version 3: the lending pool and insurance, those that ever held anything. */
  readonly systemAccounts?: SystemAccountEntry[];
  /**
   * [userId, registered (ms), status] of the users registered since issue 16 or frozen, by id;
   * absent when there is none, so a state without any keeps its bytes and hash.
   */
  readonly userRecords?: [number, number, UserStatus][];
  /** Version 4: lending offers, loan records, repayments, preferences, pool funding, the interest timer. */
  readonly margin?: MarginSnapshot;
  /**
   * Issue 15: mark-price windows, notice flags, liquidation records and the cascade queue
   * (src/engine/risk.ts); absent before the venue's first trade.
   */
  readonly risk?: RiskSnapshot;
  /**
   * Issue 33: [sub-account's user id, its main user's id, memo] by main user, then in the order
   * added; absent when there is none, so a state without any keeps its bytes and hash.
   */
  readonly subUsers?: [number, number, string][];
}

/** The engine's modules, whose states make up a snapshot. */
export interface SnapshotParts {
  readonly lastSeq: number;
  readonly settings: VenueSettings;
  readonly registry: Registry;
  readonly ledger: Ledger;
  readonly matching: Matching;
  readonly settlement: Settlement;
  readonly deadMan: DeadManSwitch;
  readonly funds: Funds;
  readonly demo: Demo;
  readonly margin: Margin;
  readonly risk: Risk;
  readonly subAccounts: SubAccounts;
}

const byKey = <T>(entries: Iterable<[string, T]>): [string, T][] =>
  [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

/** The whole state as plain data in canonical order. */
export function encodeSnapshot(p: SnapshotParts): EngineSnapshot {
  const { registry, ledger, matching } = p;
  const orders: SnapshotOrder[] = [];
  for (const o of matching.restingOrders()) {
    orders.push([
      o.id,
      o.userId,
      o.market,
      o.side,
      o.kind,
      o.price,
      o.amount,
      o.remaining,
      o.filled,
      o.filledValue,
      o.fees,
      o.platformFees,
      o.frozen,
      o.time,
      o.clientOrderId,
      o.acctType,
      o.usePlatformCoin,
      o.lastTradeId,
      o.lastTradePrice,
      o.lastTradeAmount,
      o.lastTradeTime,
    ]);
  }
  const n = registry.coinCount;
  const margin = ledger.marginEntries(n);
  const systems = ledger.systemEntries(n);
  const marginState = p.margin.isEmpty ? undefined : p.margin.snapshot();
  const accounts = margin.length > 0 || systems.length > 0 || marginState !== undefined;
  const demo = p.demo.snapshot();
  const userRecords = [...registry.users()]
    .filter((u) => u.created !== 0 || u.status !== 'active')
    .sort((a, b) => a.userId - b.userId)
    .map((u): [number, number, UserStatus] => [u.userId, u.created, u.status]);
  const subUsers = [...registry.subAccounts()]
    .flat()
    .sort((a, b) => a.mainUserId - b.mainUserId || a.userId - b.userId)
    .map((r): [number, number, string] => [r.userId, r.mainUserId, r.memo]);
  return {
    version:
      marginState !== undefined
        ? SNAPSHOT_VERSION_MARGIN
        : accounts
          ? SNAPSHOT_VERSION_ACCOUNTS
          : SNAPSHOT_VERSION,
    lastSeq: p.lastSeq,
    settings: { ...p.settings },
    coins: registry.coinStates().map((c) => ({ ...c.spec })),
    markets: registry.marketStates().map((m) => ({ spec: { ...m.spec }, lastPrice: m.lastPrice })),
    nextUserId: registry.nextUserId,
    nextOrderId: matching.nextOrderId,
    nextTradeId: p.settlement.nextTradeId,
    users: [...registry.users()]
      .sort((a, b) => a.userId - b.userId)
      .map((u) => [
        u.userId,
        u.name,
        u.usePlatformCoin,
        u.spot.column(AVAILABLE, n),
        u.spot.column(FROZEN, n),
      ]),
    orders,
    clientIds: byKey(matching.clientIds()),
    deadlines: byKey(p.deadMan.entries()),
    apiKeys: byKey(
      [...registry.apiKeys()].map(([k, v]) => [k, { ...v, ips: [...v.ips] }] as [string, ApiKeyRecord]),
    ),
    feeIncome: ledger.feeIncomeEntry(n),
    funds: p.funds.snapshot(),
    // Absent keys keep a spot-only snapshot's bytes as they were (JSON drops undefined).
    demo,
    ...(userRecords.length > 0 && { userRecords }),
    ...(accounts && { marginAccounts: margin, systemAccounts: systems }),
    ...(marginState !== undefined && { margin: marginState }),
    ...(!p.risk.isEmpty && { risk: p.risk.snapshot() }),
    ...(subUsers.length > 0 && { subUsers }),
  };
}

/** The configuration a snapshot's engine is built with before its state is loaded into it. */
export const snapshotConfig = (s: EngineSnapshot): VenueConfig => ({
  settings: s.settings,
  coins: s.coins,
  markets: s.markets.map((m) => m.spec),
  funds: s.funds.config,
});

/** Checks that a snapshot's version is one this code reads. Throws if not. */
export function checkSnapshotVersion(s: EngineSnapshot): void {
  if (!READABLE_VERSIONS.includes(s.version))
    throw new Error(`snapshot version ${s.version} is not one of ${READABLE_VERSIONS.join(', ')}`);
}

/**
 * Loads a snapshot's state into freshly built modules (configured with its settings, coins,
 * markets and funds configuration). Throws if the snapshot is inconsistent.
 */
export function decodeSnapshot(s: EngineSnapshot, p: Omit<SnapshotParts, 'lastSeq' | 'settings'>): void {
  const { registry, ledger, matching } = p;
  s.markets.forEach((m, i) => {
    const state = registry.marketStates()[i];
    if (state === undefined) throw new Error(`snapshot market ${i} missing`);
    state.lastPrice = m.lastPrice;
  });
  registry.load(s.nextUserId, s.apiKeys);
  matching.load(s.nextOrderId, s.clientIds);
  p.settlement.nextTradeId = s.nextTradeId;
  const records = new Map(
    (s.userRecords ?? []).map(([userId, created, status]) => [userId, { created, status }]),
  );
  for (const [userId, name, usePlatformCoin, available, frozen] of s.users) {
    const record = records.get(userId);
    const user = registry.addUser(userId, name, usePlatformCoin, record?.created, record?.status);
    loadBalances(user.spot, available, frozen);
  }
  for (const [userId, mainUserId, memo] of s.subUsers ?? []) {
    if (!registry.hasUser(userId) || !registry.hasUser(mainUserId))
      throw new Error(`snapshot sub-account ${userId} of ${mainUserId}: unknown user`);
    registry.addSub({ userId, mainUserId, memo });
  }
  // Accounts before orders: a margin order rests with its margin account at hand.
  ledger.load(s.feeIncome, s.marginAccounts ?? [], s.systemAccounts ?? []);
  for (const r of s.orders) {
    const [
      id,
      userId,
      market,
      side,
      kind,
      price,
      amount,
      remaining,
      filled,
      filledValue,
      fees,
      platformFees,
    ] = r;
    const [, , , , , , , , , , , , frozen, time, clientOrderId, acctType, usePlatformCoin] = r;
    const [, , , , , , , , , , , , , , , , , lastTradeId, lastTradePrice, lastTradeAmount, lastTradeTime] = r;
    const o = new Order(
      id,
      userId,
      market,
      side,
      kind,
      price,
      amount,
      frozen,
      time,
      clientOrderId,
      acctType,
      usePlatformCoin,
    );
    o.remaining = remaining;
    o.filled = filled;
    o.filledValue = filledValue;
    o.fees = fees;
    o.platformFees = platformFees;
    o.lastTradeId = lastTradeId;
    o.lastTradePrice = lastTradePrice;
    o.lastTradeAmount = lastTradeAmount;
    o.lastTradeTime = lastTradeTime;
    matching.rest(o);
  }
  p.deadMan.load(s.deadlines);
  p.funds.load(s.funds);
  if (s.demo !== undefined) p.demo.load(s.demo);
  if (s.margin !== undefined) p.margin.load(s.margin);
  p.risk.load(s.risk);
}
