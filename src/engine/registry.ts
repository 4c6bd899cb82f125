/**
 * @module registry — who and what the venue knows: coins, markets (with their books), users and
 * API keys, and the operator commands that change them.
 *
 * Commands: RegisterUser, SetFeePreference, UpsertCoin, UpsertMarket, SetMarketStatus,
 * CreateApiKey, DeleteApiKey (`apply`). A user's balances live in the ledger (its spot account is
 * opened at registration); the registry keeps the user's name, fee preference and open orders,
 * and the tree of main users and their sub-accounts (src/engine/sub-accounts.ts changes it).
 */
import {
  ACCESS_KEY,
  MAX_KEY_IPS,
  type CreateApiKey,
  type DeleteApiKey,
  type KeyPermissions,
  type RegisterUser,
  type SetFeePreference,
  type SetMarketStatus,
  type UpsertCoin,
  type UpsertMarket,
  type UserStatus,
} from '../domain/commands.ts';
import {
  baseUnitsPerLot,
  quoteUnitsPerTickLot,
  validateCoin,
  validateMarket,
  type CoinSpec,
  type MarketSpec,
} from '../domain/specs.ts';
import type { CoinUnits, PriceTicks } from '../domain/money.ts';
import type { DepthMark } from '../margin/depth-mark.ts';
import type { StepTrades } from '../margin/mark-price.ts';
import { refused, type CommandContext } from './command-context.ts';
import type { ApplyResult } from './results.ts';
import { spot, type Ledger, type LedgerAccount } from './ledger.ts';
import { OrderBook, OwnerOrders } from './order-book.ts';

const MAX_NAME_LENGTH = 64;

export interface CoinState {
  spec: CoinSpec;
  readonly index: number;
}

export interface MarketState {
  spec: MarketSpec;
  readonly index: number;
  readonly base: CoinState;
  readonly quote: CoinState;
  /** Base coin units in one lot. */
  baseUnitsPerLot: CoinUnits;
  /** Quote coin units in one tick × one lot: price × amount × this is a trade's value. */
  quoteUnitsPerTickLot: CoinUnits;
  readonly book: OrderBook;
  /** Price of the latest trade (0 before the first). */
  lastPrice: PriceTicks;
  /**
   * The trade prices of the current engine step, collected for the market's mark price while the
   * risk side watches the market (src/engine/risk.ts); `undefined` otherwise (spot costs nothing).
   */
  stepTrades: StepTrades | undefined;
  /**
   * Under the depth mark rule, the mark of a market the risk side does not watch (nothing owed
   * there), fed by settlement with every trade, so that the mark a market becomes active with is
   * its running mark, never a lone last print (issue 29); `undefined` while the market is active
   * (its mark is the risk side's) and under the median rule.
   */
  idleMark: DepthMark | undefined;
}

export interface User {
  readonly userId: number;
  readonly name: string;
  usePlatformCoin: boolean;
  /** When the user was registered (the RegisterUser command's time, ms); 0 where unknown. */
  readonly created: number;
  /** `frozen`: orders and withdrawals refused (SetUserStatus); see also `Registry.isFrozen`. */
  status: UserStatus;
  /** The main user owning this sub-account (issue 33); `undefined` for a main user. */
  mainUserId: number | undefined;
  /** The user's resting orders, oldest first. */
  readonly openOrders: OwnerOrders;
  /** The user's spot account in the ledger (kept here: a fill looks up both at once). */
  readonly spot: LedgerAccount;
  /**
   * The user's cross account once an order paid from it, and its isolated accounts likewise, by
   * market index (kept by src/engine/margin.ts `orderAccount`; accounts are never closed).
   */
  cross: LedgerAccount | undefined;
  readonly isolated: (LedgerAccount | undefined)[];
  /**
   * The isolated account an order used last and its market index (−1: none): most users trade
   * one isolated market, and a field of the user, read already, spares the array's two cold reads.
   */
  lastIsolated: LedgerAccount | undefined;
  lastIsolatedMarket: number;
}

/** An API key as the engine keeps it (the secret sealed). */
export interface ApiKeyRecord {
  readonly userId: number;
  readonly accessKey: string;
  readonly sealedSecret: string;
  readonly permissions: KeyPermissions;
  readonly ips: readonly string[];
  /** Strict mode: only when the command said `true` (so keys without it hash as before). */
  readonly replayProtection?: true;
}

/** A sub-account as its main user lists it. */
export interface SubUserRecord {
  readonly userId: number;
  readonly mainUserId: number;
  readonly memo: string;
}

/** The registry's commands. */
export type RegistryCommand =
  RegisterUser | SetFeePreference | UpsertCoin | UpsertMarket | SetMarketStatus | CreateApiKey | DeleteApiKey;

const REGISTRY_TYPES: ReadonlySet<string> = new Set<RegistryCommand['type']>([
  'RegisterUser',
  'SetFeePreference',
  'UpsertCoin',
  'UpsertMarket',
  'SetMarketStatus',
  'CreateApiKey',
  'DeleteApiKey',
]);

/** Whether a command is one of the registry's (the engine's dispatch). */
export const isRegistryCommand = (cmd: { readonly type: string }): cmd is RegistryCommand =>
  REGISTRY_TYPES.has(cmd.type);

export class Registry {
  readonly #ctx: CommandContext;
  readonly #ledger: Ledger;
  readonly #coins: CoinState[] = [];
  readonly #coinByName = new Map<string, CoinState>();
  readonly #markets: MarketState[] = [];
  readonly #marketByName = new Map<string, MarketState>();
  readonly #users = new Map<number, User>();
  readonly #userByName = new Map<string, number>();
  /** Lower-cased name → the first user registered with a name that lower-cases to it. */
  readonly #userByFoldedName = new Map<string, number>();
  readonly #apiKeys = new Map<string, ApiKeyRecord>();
  /** Main user id → its sub-accounts, in the order they were added (src/engine/sub-accounts.ts). */
  readonly #subs = new Map<number, SubUserRecord[]>();
  #nextUserId = 1;

  constructor(ctx: CommandContext, ledger: Ledger) {
    this.#ctx = ctx;
    this.#ledger = ledger;
  }

  /** Applies one of the registry's commands. */
  apply(cmd: RegistryCommand): ApplyResult {
    switch (cmd.type) {
      case 'RegisterUser':
        return this.#registerUser(cmd);
      case 'SetFeePreference':
        return this.#setFeePreference(cmd);
      case 'UpsertCoin':
        return this.#upsertCoin(cmd);
      case 'UpsertMarket':
        return this.#upsertMarket(cmd);
      case 'SetMarketStatus':
        return this.#setMarketStatus(cmd);
      case 'CreateApiKey':
        return this.#createApiKey(cmd);
      case 'DeleteApiKey':
        return this.#deleteApiKey(cmd);
    }
  }

  #ok(extra?: { userId: number }): ApplyResult {
    return extra === undefined
      ? { result: 'OK', events: this.#ctx.events }
      : { result: 'OK', events: this.#ctx.events, ...extra };
  }

  // ───────────────────────────── reads ─────────────────────────────

  get coinCount(): number {
    return this.#coins.length;
  }

  /** Coins in the order they were added (a coin's index is its place here). */
  coinStates(): readonly CoinState[] {
    return this.#coins;
  }

  coin(name: string): CoinState | undefined {
    return this.#coinByName.get(name);
  }

  /** Markets in the order they were added. */
  marketStates(): readonly MarketState[] {
    return this.#markets;
  }

  market(name: string): MarketState | undefined {
    return this.#marketByName.get(name);
  }

  user(userId: number): User | undefined {
    return this.#users.get(userId);
  }

  hasUser(userId: number): boolean {
    return this.#users.has(userId);
  }

  /**
   * Whether the user's money may not move: frozen itself, or a sub-account whose main user is
   * frozen (freezing a main user freezes its sub-accounts; each keeps its own status).
   */
  isFrozen(user: User): boolean {
    if (user.status === 'frozen') return true;
    return user.mainUserId !== undefined && this.#users.get(user.mainUserId)?.status === 'frozen';
  }

  /** A main user's sub-accounts, in the order they were added (none: empty). */
  subsOf(mainUserId: number): readonly SubUserRecord[] {
    return this.#subs.get(mainUserId) ?? [];
  }

  /** Every sub-account, by main user then order added. */
  subAccounts(): IterableIterator<readonly SubUserRecord[]> {
    return this.#subs.values();
  }

  /** Makes `userId` (a registered main user without subs) a sub-account of `mainUserId`. */
  addSub(record: SubUserRecord): void {
    const user = this.#users.get(record.userId) as User;
    user.mainUserId = record.mainUserId;
    const list = this.#subs.get(record.mainUserId);
    if (list === undefined) this.#subs.set(record.mainUserId, [record]);
    else list.push(record);
  }

  /** Users in the order they were registered. */
  users(): IterableIterator<User> {
    return this.#users.values();
  }

  /**
   * The user with this name, ignoring case: the exact name first (a history from before names
   * were unique regardless of case may hold `alice` and `Alice`), else the first user registered
   * with a name equal to it ignoring case.
   */
  userId(name: string): number | undefined {
    return this.#userByName.get(name) ?? this.#userByFoldedName.get(name.toLowerCase());
  }

  get nextUserId(): number {
    return this.#nextUserId;
  }

  apiKey(accessKey: string): ApiKeyRecord | undefined {
    return this.#apiKeys.get(accessKey);
  }

  apiKeys(): IterableIterator<[string, ApiKeyRecord]> {
    return this.#apiKeys.entries();
  }

  /** Per coin name: Σ over spot accounts of the available and frozen balances (Engine.spotHoldings). */
  spotHoldingsByName(ledger: Ledger): Map<string, { available: bigint; frozen: bigint }> {
    const { available, frozen } = ledger.spotHoldings(this.coinCount);
    return new Map(
      this.#coins.map((c) => [
        c.spec.name,
        { available: available[c.index] as bigint, frozen: frozen[c.index] as bigint },
      ]),
    );
  }

  /** Resting orders per market name (a market without any is absent). */
  openOrdersByMarket(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const m of this.#markets) if (m.book.size > 0) counts.set(m.spec.name, m.book.size);
    return counts;
  }

  coinSpecs(): Map<string, CoinSpec> {
    return new Map(this.#coins.map((c) => [c.spec.name, c.spec]));
  }

  // ───────────────────────────── building (configuration and snapshots) ─────────────────────────────

  addCoin(spec: CoinSpec): CoinState {
    const state = { spec: { ...spec }, index: this.#coins.length };
    this.#coins.push(state);
    this.#coinByName.set(spec.name, state);
    return state;
  }

  addMarket(spec: MarketSpec): MarketState {
    const base = this.#coinByName.get(spec.base) as CoinState;
    const quote = this.#coinByName.get(spec.quote) as CoinState;
    const state: MarketState = {
      spec: { ...spec },
      index: this.#markets.length,
      base,
      quote,
      baseUnitsPerLot: baseUnitsPerLot(spec, base.spec),
      quoteUnitsPerTickLot: quoteUnitsPerTickLot(spec, quote.spec),
      book: new OrderBook(),
      lastPrice: 0,
      stepTrades: undefined,
      idleMark: undefined,
    };
    this.#markets.push(state);
    this.#marketByName.set(spec.name, state);
    return state;
  }

  /** Adds a user with an empty spot account (or the one the ledger already holds for it). */
  addUser(
    userId: number,
    name: string,
    usePlatformCoin: boolean,
    created = 0,
    status: UserStatus = 'active',
  ): User {
    const user: User = {
      userId,
      name,
      usePlatformCoin,
      created,
      status,
      mainUserId: undefined,
      openOrders: new OwnerOrders(),
      spot: this.#ledger.open(spot(userId)),
      cross: undefined,
      isolated: [],
      lastIsolated: undefined,
      lastIsolatedMarket: -1,
    };
    this.#users.set(userId, user);
    this.#userByName.set(name, userId);
    const folded = name.toLowerCase();
    if (!this.#userByFoldedName.has(folded)) this.#userByFoldedName.set(folded, userId);
    return user;
  }

  /** Replaces a key's sealed secret, keeping everything else (RotateApiKey; the caller checked the key). */
  setSealedSecret(accessKey: string, sealedSecret: string): ApiKeyRecord {
    const key = { ...(this.#apiKeys.get(accessKey) as ApiKeyRecord), sealedSecret };
    this.#apiKeys.set(accessKey, key);
    return key;
  }

  /** Restores the id counter and the keys from a snapshot. */
  load(nextUserId: number, apiKeys: readonly [string, ApiKeyRecord][]): void {
    this.#nextUserId = nextUserId;
    for (const [k, v] of apiKeys) this.#apiKeys.set(k, v);
  }

  // ───────────────────────────── commands ─────────────────────────────

  /**
   * RegisterUser: a new user with empty balances. Results: OK with `userId`; INVALID_PARAMETER
   * (shape; a taken name; with `uniqueIgnoringCase`, a name taken in another case).
   */
  #registerUser(cmd: RegisterUser): ApplyResult {
    const name = cmd.name;
    if (
      typeof name !== 'string' ||
      name.length === 0 ||
      name.length > MAX_NAME_LENGTH ||
      !/^[\w.@-]+$/.test(name)
    ) {
      return refused(
        'INVALID_PARAMETER',
        `user name must be 1 to ${MAX_NAME_LENGTH} letters, digits, or . _ @ -`,
      );
    }
    if (this.#userByName.has(name)) return refused('INVALID_PARAMETER', `user name '${name}' is taken`);
    const sameIgnoringCase = this.#userByFoldedName.get(name.toLowerCase());
    if (cmd.uniqueIgnoringCase === true && sameIgnoringCase !== undefined) {
      const taken = this.#users.get(sameIgnoringCase)?.name ?? name;
      return refused(
        'INVALID_PARAMETER',
        `user name '${name}' is taken: '${taken}' exists, and names are unique regardless of case`,
      );
    }
    const userId = this.#nextUserId++;
    this.addUser(userId, name, false, this.#ctx.time);
    this.#ctx.events.push({ type: 'UserRegistered', userId, name, time: this.#ctx.time });
    return this.#ok({ userId });
  }

  #setFeePreference(cmd: SetFeePreference): ApplyResult {
    const user = this.#users.get(cmd.userId);
    if (user === undefined) return refused('USER_NOT_FOUND');
    user.usePlatformCoin = cmd.usePlatformCoin === true;
    this.#ctx.events.push({
      type: 'FeePreferenceSet',
      userId: cmd.userId,
      usePlatformCoin: user.usePlatformCoin,
    });
    return this.#ok();
  }

  /** UpsertCoin: adds a coin or changes its names and switches; unitDecimal is fixed once set. */
  #upsertCoin(cmd: UpsertCoin): ApplyResult {
    const problems = validateCoin(cmd.coin);
    if (problems.length > 0) return refused('INVALID_PARAMETER', problems.join('; '));
    const existing = this.#coinByName.get(cmd.coin.name);
    if (existing === undefined) this.addCoin(cmd.coin);
    else if (existing.spec.unitDecimal !== cmd.coin.unitDecimal) {
      return refused('INVALID_STATE', `unitDecimal of ${cmd.coin.name} cannot change`);
    } else existing.spec = { ...cmd.coin };
    this.#ctx.events.push({ type: 'CoinUpserted', coin: { ...cmd.coin } });
    return this.#ok();
  }

  /**
   * UpsertMarket: adds a market or changes its limits, fees and status. Its coins and scales are
   * fixed once created: history keeps integer ticks and lots, which a new scale would misread.
   */
  #upsertMarket(cmd: UpsertMarket): ApplyResult {
    const problems = validateMarket(cmd.market, this.coinSpecs());
    if (problems.length > 0) return refused('INVALID_PARAMETER', problems.join('; '));
    const existing = this.#marketByName.get(cmd.market.name);
    if (existing?.spec.status === 'closed' || (existing === undefined && cmd.market.status === 'closed'))
      return refused('INVALID_STATE', `market ${cmd.market.name} is closed for good`);
    if (existing === undefined) this.addMarket(cmd.market);
    else if (
      existing.spec.priceScale !== cmd.market.priceScale ||
      existing.spec.amountScale !== cmd.market.amountScale
    ) {
      return refused('INVALID_STATE', `the scales of market ${cmd.market.name} cannot change`);
    } else existing.spec = { ...cmd.market };
    this.#ctx.events.push({ type: 'MarketUpserted', market: { ...cmd.market } });
    return this.#ok();
  }

  #setMarketStatus(cmd: SetMarketStatus): ApplyResult {
    const market = this.#marketByName.get(cmd.market);
    if (market === undefined) return refused('UNKNOWN_MARKET', `unknown market '${cmd.market}'`);
    if (cmd.status !== 'trading' && cmd.status !== 'halted')
      return refused('INVALID_PARAMETER', 'unknown status');
    if (market.spec.status === 'closed')
      return refused('INVALID_STATE', `market ${cmd.market} is closed for good`);
    market.spec = { ...market.spec, status: cmd.status };
    this.#ctx.events.push({ type: 'MarketStatusSet', market: cmd.market, status: cmd.status });
    return this.#ok();
  }

  /** CreateApiKey. Results: OK; USER_NOT_FOUND; INVALID_PARAMETER (shape, duplicate key). */
  #createApiKey(cmd: CreateApiKey): ApplyResult {
    if (!this.#users.has(cmd.userId)) return refused('USER_NOT_FOUND');
    if (typeof cmd.accessKey !== 'string' || !ACCESS_KEY.test(cmd.accessKey)) {
      return refused('INVALID_PARAMETER', 'access key must be 8 to 64 letters, digits or dashes');
    }
    if (this.#apiKeys.has(cmd.accessKey)) return refused('INVALID_PARAMETER', 'access key already exists');
    const sealed = cmd.sealedSecret;
    if (typeof sealed !== 'string' || sealed.length === 0 || sealed.length > 1024)
      return refused('INVALID_PARAMETER', 'sealed secret missing');
    const p = cmd.permissions;
    if (
      p === null ||
      typeof p !== 'object' ||
      ![p.asset, p.entrust, p.money, p.lever].every((x) => typeof x === 'boolean') ||
      (p.subUser !== undefined && typeof p.subUser !== 'boolean')
    ) {
      return refused('INVALID_PARAMETER', 'permissions must be four booleans (and subUser, if given, one)');
    }
    if (
      !Array.isArray(cmd.ips) ||
      cmd.ips.length > MAX_KEY_IPS ||
      !cmd.ips.every((ip) => typeof ip === 'string' && /^[0-9a-fA-F.:]{2,45}$/.test(ip))
    ) {
      return refused('INVALID_PARAMETER', `ips must be at most ${MAX_KEY_IPS} IP addresses`);
    }
    this.#apiKeys.set(cmd.accessKey, {
      userId: cmd.userId,
      accessKey: cmd.accessKey,
      sealedSecret: cmd.sealedSecret,
      permissions: {
        asset: p.asset,
        entrust: p.entrust,
        money: p.money,
        lever: p.lever,
        // Only when granted, so the keys without it hash as before.
        ...(p.subUser === true && { subUser: true }),
      },
      ips: [...cmd.ips],
      ...(cmd.replayProtection === true && { replayProtection: true }),
    });
    this.#ctx.events.push({
      type: 'ApiKeyCreated',
      userId: cmd.userId,
      accessKey: cmd.accessKey,
      time: this.#ctx.time,
    });
    return this.#ok();
  }

  #deleteApiKey(cmd: DeleteApiKey): ApplyResult {
    const key = this.#apiKeys.get(cmd.accessKey);
    if (key === undefined) return refused('UNKNOWN_REFERENCE', 'no such access key');
    this.#apiKeys.delete(cmd.accessKey);
    this.#ctx.events.push({
      type: 'ApiKeyDeleted',
      userId: key.userId,
      accessKey: cmd.accessKey,
      time: this.#ctx.time,
    });
    return this.#ok();
  }
}
