/**
 * @module ledger — every balance the venue holds, keyed by account, each change recorded as a bill.
 *
 * ## Accounts
 * - `spot(user)`: what a user trades and withdraws from (the only kind commands use today).
 * - `isolated(user, market)`: a user's margin account for one market, holding its two coins.
 * - `cross(user)`: a user's margin account over every coin.
 * - System accounts: `FEE_INCOME` (every fee charged), `LENDING_POOL` (the platform lender's
 *   coins) and `INSURANCE` (what forced liquidations leave over, and what covers their losses).
 *
 * Per coin an account holds `available`, `frozen` (held by open orders or pending withdrawals),
 * `borrowed` (principal owed) and `interest` (accrued, unpaid), each an integer of the coin's
 * units. Available and frozen are assets the venue holds; borrowed and interest are what the
 * account owes the lenders, a claim that does not move coins by itself: a loan moves `available`
 * from the lender to the borrower and raises the borrower's `borrowed` by as much.
 *
 * ## Bills
 * A change of a user account's available or frozen balance emits one BalanceChanged (the bill:
 * its type, e.g. `buy`, `sellFee`, `freeze`, and the order, deposit or withdrawal it belongs to),
 * with the account named when it is a margin account. A system account moves only as the other
 * side of a user's bill (fee income grows by what a `buyFee`, `sellFee` or `withdrawFee` bill
 * took) and emits nothing of its own, as before the ledger existed.
 *
 * ## Invariants (`assertInvariants`)
 * No balance or debt is negative or unsafe; a spot account owes nothing; each account's frozen
 * balance equals what its orders and withdrawals hold; and per coin, Σ (available + frozen) over
 * every account, system accounts included, equals credits − settled withdrawals + pool funding
 * (the operator's books of src/engine/books.ts add it up the same way, by kind of account).
 */
import type { BillType, MarginAccountRef } from '../domain/events.ts';
import type { CoinUnits } from '../domain/money.ts';
import type { CommandContext } from './command-context.ts';
import type { LedgerCoin } from './funds.ts';
import { accountKey } from '../margin/movement.ts';
import { AVAILABLE, BORROWED, BalanceStore, FROZEN, INTEREST, type BalanceField } from './balance-store.ts';

/** The venue's own accounts. */
export type SystemAccountName = 'feeIncome' | 'lendingPool' | 'insurance';
export const FEE_INCOME: SystemAccountName = 'feeIncome';
export const LENDING_POOL: SystemAccountName = 'lendingPool';
export const INSURANCE: SystemAccountName = 'insurance';
const SYSTEM_ACCOUNTS: readonly SystemAccountName[] = [FEE_INCOME, LENDING_POOL, INSURANCE];

/** Which account: the ledger's key. */
export type AccountKey =
  | { readonly kind: 'spot'; readonly userId: number }
  | { readonly kind: 'isolated'; readonly userId: number; readonly market: string }
  | { readonly kind: 'cross'; readonly userId: number }
  | { readonly kind: 'system'; readonly name: SystemAccountName };

export const spot = (userId: number): AccountKey => ({ kind: 'spot', userId });
export const isolated = (userId: number, market: string): AccountKey => ({
  kind: 'isolated',
  userId,
  market,
});
export const cross = (userId: number): AccountKey => ({ kind: 'cross', userId });
export const system = (name: SystemAccountName): AccountKey => ({ kind: 'system', name });

/** Sets an account's balances from their plain-data form (a snapshot), by coin index. */
export function loadBalances(
  a: LedgerAccount,
  available: readonly CoinUnits[],
  frozen: readonly CoinUnits[],
  borrowed: readonly CoinUnits[] = [],
  interest: readonly CoinUnits[] = [],
): void {
  available.forEach((v, i) => a.write(i, AVAILABLE, v));
  frozen.forEach((v, i) => a.write(i, FROZEN, v));
  for (let i = 0; i < Math.max(borrowed.length, interest.length); i++) {
    const before = a.owed(i);
    a.write(i, BORROWED, borrowed[i] ?? 0);
    a.write(i, INTEREST, interest[i] ?? 0);
    a.noteDebt(i, before, a.owed(i));
  }
}

/** Coin indexes below this have a bit in an account's owing mask; higher ones read the debts. */
const OWING_BITS = 31;

/**
 * A place on every ledger account where one other module keeps its own per-account state (the risk
 * step's liquidation index entry, a cross account's risk slot, the margin preferences): found on
 * the object a fill has just touched rather than by a lookup keyed by account or user, each a cache
 * miss in a venue of many accounts (issue 14). A module claims its slot once, at load
 * (`claimAccountSlot`), and keeps it to itself: no other module can read or write what it holds,
 * and the ledger does not know its type.
 */
export interface AccountSlot<T> {
  get(a: LedgerAccount): T | undefined;
  set(a: LedgerAccount, value: T | undefined): void;
}

/** The slots `LedgerAccount` has, made by its static block; claimed in turn. */
const SLOTS: AccountSlot<unknown>[] = [];
let slotsClaimed = 0;

/** Claims the next account slot for `what` (a module's own state); throws when none is left. */
export function claimAccountSlot<T>(what: string): AccountSlot<T> {
  const slot = SLOTS[slotsClaimed];
  if (slot === undefined)
    throw new Error(
      `no ledger account slot left for ${what}: give LedgerAccount one more (#slot${SLOTS.length})`,
    );
  slotsClaimed++;
  return slot as AccountSlot<T>;
}

/**
 * One account's balances, per coin index (a missing entry is 0), and the ledger's own bookkeeping
 * of its debts. What other modules keep per account is in its slots (`AccountSlot`), each read and
 * written only by the module that claimed it.
 */
export class LedgerAccount {
  readonly key: AccountKey;
  /** The key's kind, read without the key object (the risk step asks it of every account it takes). */
  readonly kind: AccountKey['kind'];
  /** The owner (0 for a system account). */
  readonly userId: number;
  /** What BalanceChanged names for a margin account; undefined for spot and system accounts. */
  readonly margin: MarginAccountRef | undefined;
  /** Where the balances are: this account's row of `#store` (src/engine/balance-store.ts). */
  readonly #store: BalanceStore;
  readonly #row: number;
  /**
   * Bit i set while the account owes principal or interest in coin index i (i < 31): a fill into
   * a margin account asks `owes` without reading the debt arrays (issue 14's bench: one field of
   * an object the fill has just touched instead of two cold arrays).
   */
  #owing = 0;
  /** How many coins the account owes principal or interest in. */
  #debtCoins = 0;
  /**
   * Where the account is in its ledger's `touched` list, −1 when it is not: written by
   * `TouchedAccounts` alone (a plain field: through a module-private accessor it cost the margin
   * stream 6 % more instructions, bench/README.md).
   */
  touchedAt = -1;
  /** The slots other modules claim (`claimAccountSlot`): as many as there are claimants. */
  #slot0: unknown = undefined;
  #slot1: unknown = undefined;
  #slot2: unknown = undefined;
  #name: string | undefined;

  static {
    SLOTS.push(
      {
        get: (a) => a.#slot0,
        set: (a, v) => {
          a.#slot0 = v;
        },
      },
      {
        get: (a) => a.#slot1,
        set: (a, v) => {
          a.#slot1 = v;
        },
      },
      {
        get: (a) => a.#slot2,
        set: (a, v) => {
          a.#slot2 = v;
        },
      },
    );
  }

  constructor(key: AccountKey, store: BalanceStore) {
    this.key = key;
    this.kind = key.kind;
    this.#store = store;
    this.#row = store.addRow();
    this.userId = key.kind === 'system' ? 0 : key.userId;
    this.margin =
      key.kind === 'isolated'
        ? { kind: 'isolated', market: key.market }
        : key.kind === 'cross'
          ? { kind: 'cross' }
          : undefined;
  }

  /** The account's text key (`accountKey`: "isolated:7:btc_usdt"), made once. */
  get name(): string {
    return (this.#name ??= accountKey(this.key));
  }

  /** Available balance of the coin of index `i`. */
  available(i: number): CoinUnits {
    return this.#store.get(this.#row, i, AVAILABLE);
  }

  /** Frozen balance (held by open orders and pending withdrawals) of the coin of index `i`. */
  frozen(i: number): CoinUnits {
    return this.#store.get(this.#row, i, FROZEN);
  }

  /** Principal owed in the coin of index `i`. */
  borrowed(i: number): CoinUnits {
    return this.#store.get(this.#row, i, BORROWED);
  }

  /** Interest accrued and not yet paid in the coin of index `i`. */
  interest(i: number): CoinUnits {
    return this.#store.get(this.#row, i, INTEREST);
  }

  /** Principal and interest owed in the coin of index `i`. */
  owed(i: number): CoinUnits {
    return this.#store.get(this.#row, i, BORROWED) + this.#store.get(this.#row, i, INTEREST);
  }

  /**
   * Sets one balance. Only the ledger writes (its methods check and bill every change); the
   * method is public for the ledger's own helpers and snapshot loading.
   */
  write(i: number, field: BalanceField, value: CoinUnits): void {
    this.#store.set(this.#row, i, field, value);
  }

  /** The first `n` coins' values of one field, as an array (snapshots, views). */
  column(field: BalanceField, n: number): CoinUnits[] {
    return Array.from({ length: n }, (_, i) => this.#store.get(this.#row, i, field));
  }

  /** Whether any balance or debt of the account is non-zero. */
  holdsAnything(): boolean {
    return this.#store.anyNonZero(this.#row);
  }

  /** Whether the account owes principal or interest in the coin of index `i`. */
  owes(i: number): boolean {
    return i < OWING_BITS ? (this.#owing & (1 << i)) !== 0 : this.owed(i) > 0;
  }

  /** How many coins the account owes principal or interest in. */
  get debtCoins(): number {
    return this.#debtCoins;
  }

  /** Keeps the owing mask and `debtCoins` in step after coin `i`'s debt went from `before` to `owed`. */
  noteDebt(i: number, before: CoinUnits, owed: CoinUnits): void {
    if (before > 0 !== owed > 0) this.#debtCoins += owed > 0 ? 1 : -1;
    if (i < OWING_BITS) this.#owing = owed > 0 ? this.#owing | (1 << i) : this.#owing & ~(1 << i);
  }
}

/** A margin account's balances as plain data: [kind, userId, market ('' for cross), available, frozen, borrowed, interest]. */
export type MarginAccountEntry = [
  kind: 'isolated' | 'cross',
  userId: number,
  market: string,
  available: CoinUnits[],
  frozen: CoinUnits[],
  borrowed: CoinUnits[],
  interest: CoinUnits[],
];

/** A system account other than fee income as plain data: [name, available, frozen, borrowed, interest]. */
export type SystemAccountEntry = [
  name: SystemAccountName,
  available: CoinUnits[],
  frozen: CoinUnits[],
  borrowed: CoinUnits[],
  interest: CoinUnits[],
];

/**
 * The margin accounts changed since the risk step last took them, in the order first changed (as a
 * `Set` keeps them), without a hash lookup per change: each account knows its place in the list
 * (`LedgerAccount.touchedAt`, which only this list writes), and a place it has left is skipped.
 */
export class TouchedAccounts {
  readonly #list: LedgerAccount[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(a: LedgerAccount): void {
    if (a.touchedAt >= 0) return;
    a.touchedAt = this.#list.length;
    this.#list.push(a);
    this.#size++;
  }

  delete(a: LedgerAccount): void {
    if (a.touchedAt < 0) return;
    a.touchedAt = -1;
    this.#size--;
  }

  /** The account at place `k` (`k` < `length`), or undefined where one was deleted. */
  at(k: number): LedgerAccount | undefined {
    const a = this.#list[k] as LedgerAccount;
    return a.touchedAt === k ? a : undefined;
  }

  /** Places used since the last `clear` (deleted ones included). */
  get length(): number {
    return this.#list.length;
  }

  clear(): void {
    const list = this.#list;
    for (let k = 0; k < list.length; k++) {
      const a = list[k] as LedgerAccount;
      if (a.touchedAt === k) a.touchedAt = -1;
    }
    list.length = 0;
    this.#size = 0;
  }
}

const isolatedId = (userId: number, market: string): string => `${userId}:${market}`;

export class Ledger {
  readonly #ctx: CommandContext;
  readonly #store = new BalanceStore();
  readonly #spot = new Map<number, LedgerAccount>();
  /** `${userId}:${market}` → isolated account. */
  readonly #isolated = new Map<string, LedgerAccount>();
  readonly #cross = new Map<number, LedgerAccount>();
  readonly #system = new Map<SystemAccountName, LedgerAccount>(
    SYSTEM_ACCOUNTS.map((name) => [name, new LedgerAccount(system(name), this.#store)]),
  );
  /** The fee income account, kept at hand: every fee lands in it. */
  readonly #feeIncome = this.#system.get(FEE_INCOME) as LedgerAccount;

  /**
   * Margin accounts (isolated and cross) whose debts changed, or whose balances changed while they
   * owed something, since the risk module last took them (src/engine/risk.ts keeps the liquidation
   * index and the cross bound current from it); `undefined`: not tracked.
   */
  touched: TouchedAccounts | undefined;

  constructor(ctx: CommandContext) {
    this.#ctx = ctx;
  }

  /** The account under `key`, opened empty if it does not exist yet. */
  open(key: AccountKey): LedgerAccount {
    const existing = this.account(key);
    if (existing !== undefined) return existing;
    const account = new LedgerAccount(key, this.#store);
    if (key.kind === 'spot') this.#spot.set(key.userId, account);
    else if (key.kind === 'isolated') this.#isolated.set(isolatedId(key.userId, key.market), account);
    else if (key.kind === 'cross') this.#cross.set(key.userId, account);
    return account;
  }

  /** The account under `key`, or undefined if it was never opened (system accounts always exist). */
  account(key: AccountKey): LedgerAccount | undefined {
    switch (key.kind) {
      case 'spot':
        return this.#spot.get(key.userId);
      case 'isolated':
        return this.#isolated.get(isolatedId(key.userId, key.market));
      case 'cross':
        return this.#cross.get(key.userId);
      case 'system':
        return this.#system.get(key.name);
    }
  }

  /** A user's spot account (the hot path: one map lookup). */
  spot(userId: number): LedgerAccount | undefined {
    return this.#spot.get(userId);
  }

  /**
   * Moves a user account's available and frozen balances of one coin and emits the bill
   * (BalanceChanged). Callers have checked that nothing goes negative: a negative result is a
   * broken invariant and throws.
   */
  change(
    account: LedgerAccount,
    coin: LedgerCoin,
    deltaAvailable: CoinUnits,
    deltaFrozen: CoinUnits,
    billType: BillType,
    ref: string,
  ): void {
    const i = coin.index;
    const available = account.available(i) + deltaAvailable;
    const frozen = account.frozen(i) + deltaFrozen;
    if (available < 0 || frozen < 0) {
      throw new Error(
        `invariant broken: user ${account.userId} ${coin.spec.name} would go negative (${billType} ${ref})`,
      );
    }
    account.write(i, AVAILABLE, available);
    account.write(i, FROZEN, frozen);
    // A freeze or release (no change in total) moves no line, nor does any change of an account
    // that owes nothing (the change of debt that ends or starts its debt is itself taken).
    if (account.margin !== undefined && account.debtCoins > 0 && deltaAvailable + deltaFrozen !== 0)
      this.touched?.add(account);
    const ctx = this.#ctx;
    const bill = ctx.pool.bill(account.userId, account.margin, coin.spec.name, billType, ref);
    bill.available = available;
    bill.frozen = frozen;
    bill.deltaAvailable = deltaAvailable;
    bill.deltaFrozen = deltaFrozen;
    bill.time = ctx.time;
    ctx.events.push(bill);
  }

  /**
   * Changes what an account owes in one coin (principal and accrued interest). Emits nothing:
   * the loan records that margin keeps are the bills of debt. Throws if either would go negative.
   */
  changeDebt(
    account: LedgerAccount,
    coin: LedgerCoin,
    deltaBorrowed: CoinUnits,
    deltaInterest: CoinUnits,
  ): void {
    if (account.key.kind === 'spot')
      throw new Error(`invariant broken: spot account of user ${account.userId} borrows`);
    const i = coin.index;
    const before = account.owed(i);
    const borrowed = account.borrowed(i) + deltaBorrowed;
    const interest = account.interest(i) + deltaInterest;
    if (borrowed < 0 || interest < 0)
      throw new Error(`invariant broken: user ${account.userId} ${coin.spec.name} debt would go negative`);
    account.write(i, BORROWED, borrowed);
    account.write(i, INTEREST, interest);
    account.noteDebt(i, before, borrowed + interest);
    this.touched?.add(account);
  }

  /** Credits a system account (the other side of a user's bill; no event of its own). */
  creditSystem(name: SystemAccountName, coin: LedgerCoin, amount: CoinUnits): void {
    const account = name === FEE_INCOME ? this.#feeIncome : (this.#system.get(name) as LedgerAccount);
    account.write(coin.index, AVAILABLE, account.available(coin.index) + amount);
  }

  /**
   * Moves a system account's available and frozen balances (the other side of a user's bill: no
   * event of its own). Throws if either would go negative.
   */
  changeSystem(
    account: LedgerAccount,
    coin: LedgerCoin,
    deltaAvailable: CoinUnits,
    deltaFrozen: CoinUnits,
  ): void {
    if (account.key.kind !== 'system') throw new Error(`changeSystem on user ${account.userId}'s account`);
    const i = coin.index;
    const available = account.available(i) + deltaAvailable;
    const frozen = account.frozen(i) + deltaFrozen;
    if (available < 0 || frozen < 0)
      throw new Error(`invariant broken: ${account.key.name} ${coin.spec.name} would go negative`);
    account.write(i, AVAILABLE, available);
    account.write(i, FROZEN, frozen);
  }

  /** Adds a fee to fee income. */
  addFeeIncome(coin: LedgerCoin, amount: CoinUnits): void {
    const fees = this.#feeIncome;
    fees.write(coin.index, AVAILABLE, fees.available(coin.index) + amount);
  }

  /** Fee income of a coin. */
  feeIncome(coin: LedgerCoin): CoinUnits {
    return this.#feeIncome.available(coin.index);
  }

  /** Spot accounts by user id, in the order they were opened. */
  spotAccounts(): IterableIterator<LedgerAccount> {
    return this.#spot.values();
  }

  /** Isolated and cross accounts, isolated first, each kind in the order opened. */
  *marginAccounts(): Generator<LedgerAccount> {
    yield* this.#isolated.values();
    yield* this.#cross.values();
  }

  /** Every account: spot, isolated, cross, then the system accounts. */
  *accounts(): Generator<LedgerAccount> {
    yield* this.#spot.values();
    yield* this.marginAccounts();
    yield* this.#system.values();
  }

  /** Per coin index: Σ available + frozen over user accounts (spot and margin), as bigints. */
  userHoldings(coins: number): bigint[] {
    const totals = new Array<bigint>(coins).fill(0n);
    for (const a of this.#spot.values()) addHoldings(totals, a);
    for (const a of this.marginAccounts()) addHoldings(totals, a);
    return totals;
  }

  /** Per coin index: Σ available and Σ frozen over the spot accounts, as bigints. */
  spotHoldings(coins: number): { available: bigint[]; frozen: bigint[] } {
    const available = new Array<bigint>(coins).fill(0n);
    const frozen = new Array<bigint>(coins).fill(0n);
    for (const a of this.#spot.values()) {
      for (let i = 0; i < coins; i++) {
        available[i] = (available[i] as bigint) + BigInt(a.available(i));
        frozen[i] = (frozen[i] as bigint) + BigInt(a.frozen(i));
      }
    }
    return { available, frozen };
  }

  /**
   * Checks every account: balances and debts safe and not negative, spot accounts owe nothing,
   * frozen equal to `holds(account)` (per coin index), and, per coin, everything held (users and
   * system accounts) equal to `net(coinIndex)` (credits − settled withdrawals). Throws on the first
   * broken rule.
   */
  assertInvariants(
    coins: readonly LedgerCoin[],
    holds: (account: LedgerAccount) => readonly CoinUnits[] | undefined,
    net: (coin: LedgerCoin) => bigint,
  ): void {
    const n = coins.length;
    const totals = new Array<bigint>(n).fill(0n);
    for (const a of this.accounts()) {
      const expected = a.key.kind === 'system' ? undefined : holds(a);
      const who = a.key.kind === 'system' ? a.key.name : `user ${a.userId}`;
      let owedCoins = 0;
      for (let i = 0; i < n; i++) if (a.owed(i) > 0) owedCoins++;
      if (owedCoins !== a.debtCoins)
        throw new Error(`${who}: owes ${owedCoins} coins, counted ${a.debtCoins}`);
      for (let i = 0; i < n; i++) {
        const coin = (coins[i] as LedgerCoin).spec.name;
        for (const [field, v] of [
          ['available', a.available(i)],
          ['frozen', a.frozen(i)],
          ['borrowed', a.borrowed(i)],
          ['interest', a.interest(i)],
        ] as const) {
          if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${who} ${coin} ${field} ${v}`);
        }
        if (a.key.kind === 'spot' && (a.borrowed(i) !== 0 || a.interest(i) !== 0))
          throw new Error(`${who} ${coin}: a spot account owes ${a.borrowed(i)} + ${a.interest(i)}`);
        if (a.key.kind !== 'system') {
          const frozen = a.frozen(i);
          const held = expected?.[i] ?? 0;
          if (frozen !== held) throw new Error(`${who} ${coin} frozen ${frozen}, holds ${held}`);
          if (a.owes(i) !== a.owed(i) > 0)
            throw new Error(`${who} ${coin}: the owing flag is out of step with the debt`);
        }
      }
      addHoldings(totals, a);
    }
    for (let i = 0; i < n; i++) {
      const coin = coins[i] as LedgerCoin;
      const held = totals[i] as bigint;
      const expected = net(coin);
      if (held !== expected)
        throw new Error(`conservation broken for ${coin.spec.name}: held ${held}, net credits ${expected}`);
    }
  }

  // ───────────── snapshot encoding (src/engine/snapshot.ts lays it out) ─────────────

  /** Fee income per coin index, `coins` long. */
  feeIncomeEntry(coins: number): CoinUnits[] {
    return this.#feeIncome.column(AVAILABLE, coins);
  }

  /** Margin accounts as plain data, sorted by kind, user and market; empty when there are none. */
  marginEntries(coins: number): MarginAccountEntry[] {
    const out: MarginAccountEntry[] = [];
    for (const a of this.marginAccounts()) {
      const key = a.key as Extract<AccountKey, { kind: 'isolated' | 'cross' }>;
      out.push([
        key.kind,
        key.userId,
        key.kind === 'isolated' ? key.market : '',
        a.column(AVAILABLE, coins),
        a.column(FROZEN, coins),
        a.column(BORROWED, coins),
        a.column(INTEREST, coins),
      ]);
    }
    return out.sort(
      (x, y) =>
        (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0) || x[1] - y[1] || (x[2] < y[2] ? -1 : x[2] > y[2] ? 1 : 0),
    );
  }

  /** Lending pool and insurance as plain data, only those that ever held or owed anything. */
  systemEntries(coins: number): SystemAccountEntry[] {
    const out: SystemAccountEntry[] = [];
    for (const a of this.#system.values()) {
      if (a === this.#feeIncome) continue;
      if (!a.holdsAnything()) continue;
      out.push([
        a.key.kind === 'system' ? a.key.name : FEE_INCOME,
        a.column(AVAILABLE, coins),
        a.column(FROZEN, coins),
        a.column(BORROWED, coins),
        a.column(INTEREST, coins),
      ]);
    }
    return out;
  }

  /** Loads fee income, margin and system accounts from their plain-data form (a fresh ledger). */
  load(
    feeIncome: readonly CoinUnits[],
    margin: readonly MarginAccountEntry[],
    systems: readonly SystemAccountEntry[],
  ): void {
    feeIncome.forEach((v, i) => this.#feeIncome.write(i, AVAILABLE, v));
    for (const [kind, userId, market, available, frozen, borrowed, interest] of margin) {
      const a = this.open(kind === 'isolated' ? isolated(userId, market) : cross(userId));
      loadBalances(a, available, frozen, borrowed, interest);
    }
    for (const [name, available, frozen, borrowed, interest] of systems) {
      const a = this.#system.get(name);
      if (a === undefined || a === this.#feeIncome)
        throw new Error(`snapshot: unknown system account ${name}`);
      loadBalances(a, available, frozen, borrowed, interest);
    }
  }
}

function addHoldings(totals: bigint[], a: LedgerAccount): void {
  for (let i = 0; i < totals.length; i++)
    totals[i] = (totals[i] as bigint) + BigInt(a.available(i)) + BigInt(a.frozen(i));
}
