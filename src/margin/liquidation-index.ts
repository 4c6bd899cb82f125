/**
 * @module liquidation-index — isolated margin accounts of one market indexed by the mark prices at
 * which they reach their lines, so that a move of the mark touches only the accounts it crosses
 * (O(log n + k) per move, k the accounts crossed), and the notice flag with its hysteresis.
 *
 * ## Triggers
 * From `unwindPrice` (`lines.ts`) at each line, an account's position gives a tick and a side:
 * "at or below t" (it holds more base than the line times what it owes of it: a long) or "at or
 * above t" (a short). The index keeps the accounts in ordered sets per line and side; a mark m
 * triggers the "below" entries with t ≥ m and the "above" entries with t ≤ m.
 *
 * ## Lines
 * - **Liquidation**: risk rate ≤ forceRepayLine (1.08). Triggered accounts are handed to
 *   `liquidation.ts`; the caller locks them and removes them from the index.
 * - **Notice** (the flag): set when the risk rate is ≤ noticeLine (1.13); cleared only when it is
 *   above noticeLine + `NOTICE_HYSTERESIS_BP` (1.15 with the venue's numbers), so a mark wavering
 *   around the line does not flag and unflag the account (and push to its owner) on every tick.
 *   An unflagged account sits in the notice sets; a flagged one in the clear sets, whose triggers
 *   are the complement of the hysteresis line's: "below t" clears at m ≥ t + 1, "above t" at
 *   m ≤ t − 1, and a position the hysteresis line never reaches clears at any price.
 *
 * ## Updates
 * The caller calls `update` after every change of an account's assets or debt (a fill, a
 * transfer, a borrow, a repayment, an interest charge), with the market's current mark, and
 * `remove` when it has no debt left or is locked for liquidation; `move` on every new mark.
 *
 * ## Cross accounts
 * A cross account's risk depends on every coin it holds or owes, so it has no single unwind price.
 * `CrossWatch` keeps, per coin, the cross accounts holding or owing it; a new mark of a market
 * re-values (in full, through `valuation-path.ts`) the cross accounts holding or owing either of
 * its coins, in account-key order. The cost is the number of such accounts, not all accounts.
 */
import { unwindAt, unwindAtFast, type CoinPosition, type Ratio, type UnwindPrice } from './lines.ts';
import { OrderedSet } from './ordered-set.ts';
import type { MarginSettings } from './settings.ts';

/** The notice flag clears above noticeLine + this many basis points (1.13 → 1.15). */
export const NOTICE_HYSTERESIS_BP = 200;

/** An account's triggers: "at or below" (`le`) or "at or above" (`ge`) a tick; `undefined`: never. */
export interface Trigger {
  readonly op: 'le' | 'ge';
  readonly priceTicks: number;
}

export interface AccountTriggers {
  readonly liquidation: Trigger | undefined;
  readonly notice: Trigger | undefined;
  /** When a flagged account's flag clears. */
  readonly clear: Trigger;
}

const fromUnwind = (u: UnwindPrice | undefined): Trigger | undefined =>
  u === undefined ? undefined : { op: u.side === 'below' ? 'le' : 'ge', priceTicks: u.priceTicks };

/** Whether a trigger holds at a mark. */
export const holds = (t: Trigger | undefined, mark: number): boolean =>
  t !== undefined && (t.op === 'le' ? mark <= t.priceTicks : mark >= t.priceTicks);

/**
 * The triggers of an isolated account's position (base and quote) under `s`; `perTick` is the value
 * of one base unit at one tick. `undefined` when it owes nothing.
 */
export function triggersOf(
  base: CoinPosition,
  quote: CoinPosition,
  s: MarginSettings,
  perTick: Ratio,
  hysteresisBp: number = NOTICE_HYSTERESIS_BP,
): AccountTriggers | undefined {
  return triggersAt(
    base.available + base.frozen,
    base.principal + base.interest,
    quote.available + quote.frozen,
    quote.principal + quote.interest,
    s,
    perTick,
    hysteresisBp,
  );
}

/**
 * `triggersOf` on the position's sums (held and owed of base and quote, units): what the engine
 * calls after each change of an account, without building positions.
 */
export function triggersAt(
  heldBase: number,
  owedBase: number,
  heldQuote: number,
  owedQuote: number,
  s: MarginSettings,
  perTick: Ratio,
  hysteresisBp: number = NOTICE_HYSTERESIS_BP,
): AccountTriggers | undefined {
  if (owedBase + owedQuote === 0) return undefined;
  const n = Number(perTick.num);
  const d = Number(perTick.den);
  const exact = Number.isSafeInteger(n) && Number.isSafeInteger(d);
  const at = (lineBp: number): Trigger | undefined => {
    const fast = exact ? unwindAtFast(heldBase, owedBase, heldQuote, owedQuote, lineBp, n, d) : null;
    if (fast !== null) return fromUnwind(fast);
    return fromUnwind(
      unwindAt(
        BigInt(heldBase),
        BigInt(owedBase),
        BigInt(heldQuote),
        BigInt(owedQuote),
        BigInt(lineBp),
        perTick,
      ),
    );
  };
  const h = at(s.noticeLineBp + hysteresisBp);
  const clear: Trigger =
    h === undefined
      ? { op: 'ge', priceTicks: 0 }
      : h.op === 'le'
        ? { op: 'ge', priceTicks: h.priceTicks + 1 }
        : { op: 'le', priceTicks: h.priceTicks - 1 };
  return { liquidation: at(s.forceRepayLineBp), notice: at(s.noticeLineBp), clear };
}

const sameTrigger = (a: Trigger | undefined, b: Trigger | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && a.op === b.op && a.priceTicks === b.priceTicks);

/** Whether two accounts' triggers are the same (an update that changes none touches no set). */
export const sameTriggers = (a: AccountTriggers, b: AccountTriggers): boolean =>
  sameTrigger(a.liquidation, b.liquidation) &&
  sameTrigger(a.notice, b.notice) &&
  sameTrigger(a.clear, b.clear);

/** What a move of the mark (or an account's update) asks the caller to do. */
export interface Crossed {
  /** Accounts at or below the liquidation line, in key order. */
  readonly liquidate: string[];
  /** Accounts newly flagged at the notice line. */
  readonly flagged: string[];
  /** Accounts whose flag cleared. */
  readonly cleared: string[];
}

/** Nothing crossed (shared: callers only read it). */
export const NOTHING_CROSSED: Crossed = Object.freeze({
  liquidate: Object.freeze([]) as unknown as string[],
  flagged: Object.freeze([]) as unknown as string[],
  cleared: Object.freeze([]) as unknown as string[],
});

/**
 * One account's place in an index, kept for good once made (`entry`): the caller holds it and
 * updates through it (`updateEntry`) without a lookup by key. Its triggers are flat numbers (op 0
 * none, 1 `le`, 2 `ge`): a fill that moves no line compares them without reading three objects.
 */
export class IndexEntry {
  readonly key: string;
  /** The index it belongs to (a caller's handle from another index is not this one's). */
  readonly index: LiquidationIndex;
  /** In the trigger sets: the account owes something. */
  linked = false;
  flagged = false;
  lOp = 0;
  lTicks = 0;
  nOp = 0;
  nTicks = 0;
  cOp = 0;
  cTicks = 0;

  constructor(key: string, index: LiquidationIndex) {
    this.key = key;
    this.index = index;
  }

  /** The triggers it is linked with; undefined when not linked. */
  get triggers(): AccountTriggers | undefined {
    if (!this.linked) return undefined;
    return {
      liquidation: trigger(this.lOp, this.lTicks),
      notice: trigger(this.nOp, this.nTicks),
      clear: trigger(this.cOp, this.cTicks) as Trigger,
    };
  }

  /** Whether `t` are the triggers it is linked with. */
  same(t: AccountTriggers): boolean {
    return (
      this.linked &&
      sameAs(this.lOp, this.lTicks, t.liquidation) &&
      sameAs(this.nOp, this.nTicks, t.notice) &&
      sameAs(this.cOp, this.cTicks, t.clear)
    );
  }

  set(t: AccountTriggers): void {
    this.lOp = opOf(t.liquidation);
    this.lTicks = t.liquidation?.priceTicks ?? 0;
    this.nOp = opOf(t.notice);
    this.nTicks = t.notice?.priceTicks ?? 0;
    this.cOp = opOf(t.clear);
    this.cTicks = t.clear.priceTicks;
  }
}

const LE = 1;
const GE = 2;
const opOf = (t: Trigger | undefined): number => (t === undefined ? 0 : t.op === 'le' ? LE : GE);
const trigger = (op: number, priceTicks: number): Trigger | undefined =>
  op === 0 ? undefined : { op: op === LE ? 'le' : 'ge', priceTicks };
const sameAs = (op: number, ticks: number, t: Trigger | undefined): boolean =>
  t === undefined ? op === 0 : op === (t.op === 'le' ? LE : GE) && ticks === t.priceTicks;

class TriggerSets {
  readonly le = new OrderedSet();
  readonly ge = new OrderedSet();
  add(op: number, priceTicks: number, key: string): void {
    if (op !== 0) (op === LE ? this.le : this.ge).insert(priceTicks, key);
  }
  delete(op: number, priceTicks: number, key: string): void {
    if (op !== 0) (op === LE ? this.le : this.ge).delete(priceTicks, key);
  }
  /** Whether any entry holds at `mark` (no allocation: the usual answer to a move is none). */
  any(mark: number): boolean {
    return (this.le.maxPrice() ?? -Infinity) >= mark || (this.ge.minPrice() ?? Infinity) <= mark;
  }
  at(mark: number): string[] {
    return [...this.le.atOrAbove(mark), ...this.ge.atOrBelow(mark)];
  }
}

/** Versions of every index, unique across instances (a cache keyed by one never mistakes another). */
let nextVersion = 1;

/** The index of one market's isolated accounts. Keys are `accountKey`s. */
export class LiquidationIndex {
  #version = nextVersion++;
  /** Every account ever updated, linked or not (accounts are never closed). */
  readonly #entries = new Map<string, IndexEntry>();
  /** Entries linked: accounts that owe something. */
  #size = 0;
  readonly #liquidation = new TriggerSets();
  readonly #notice = new TriggerSets();
  readonly #clear = new TriggerSets();
  /** Flags restored from a snapshot, taken by each account's first `update`. */
  readonly #restoredFlags: Set<string>;

  /**
   * A fresh index, or one restored: the triggers are not snapshotted (they follow from the
   * accounts' positions, and the caller re-`update`s every account that owes something), but the
   * notice flags are, because with the hysteresis they depend on the path of the mark.
   */
  constructor(flagged: Iterable<string> = []) {
    this.#restoredFlags = new Set(flagged);
  }

  /** The flagged accounts, in key order: the index's part of a snapshot. */
  snapshot(): string[] {
    const out: string[] = [];
    for (const [k, e] of this.#entries) if (e.flagged) out.push(k);
    for (const k of this.#restoredFlags) if (this.#entries.get(k)?.linked !== true) out.push(k);
    return out.sort();
  }

  /** Accounts in the index (owing something). */
  get size(): number {
    return this.#size;
  }

  isFlagged(key: string): boolean {
    return this.#entries.get(key)?.flagged ?? false;
  }

  triggers(key: string): AccountTriggers | undefined {
    return this.#entries.get(key)?.triggers;
  }

  /** The account's entry, made (not linked) if it has none: a handle for `updateEntry`. */
  entry(key: string): IndexEntry {
    let e = this.#entries.get(key);
    if (e === undefined) {
      e = new IndexEntry(key, this);
      // A flag restored from a snapshot is the entry's until its first update takes it.
      this.#entries.set(key, e);
    }
    return e;
  }

  /**
   * Sets an account's triggers (`undefined`: it owes nothing, and leaves the index) and checks them
   * at the current mark (`undefined` before the market's first trade: nothing triggers).
   */
  update(key: string, triggers: AccountTriggers | undefined, mark: number | undefined): Crossed {
    return this.updateEntry(this.entry(key), triggers, mark);
  }

  /** `update` through the account's entry (`entry`, of this index). */
  updateEntry(e: IndexEntry, triggers: AccountTriggers | undefined, mark: number | undefined): Crossed {
    const key = e.key;
    let wasFlagged = e.flagged;
    if (this.#restoredFlags.size > 0 && this.#restoredFlags.delete(key) && !e.linked) wasFlagged = true;
    if (triggers === undefined) {
      if (e.linked) this.#unlink(e);
      e.flagged = false;
      return wasFlagged ? { liquidate: [], flagged: [], cleared: [key] } : NOTHING_CROSSED;
    }
    let flagged = wasFlagged;
    if (mark !== undefined) {
      if (!flagged && holds(triggers.notice, mark)) flagged = true;
      else if (flagged && holds(triggers.clear, mark)) flagged = false;
    }
    if (e.same(triggers)) {
      // The usual case after a fill that moved no line: no set changes unless the flag did.
      if (flagged !== e.flagged) this.#reflag(e, flagged);
    } else {
      if (e.linked) this.#unlink(e);
      e.set(triggers);
      e.flagged = flagged;
      this.#link(e);
    }
    const liquidate = mark !== undefined && holds(triggers.liquidation, mark);
    if (!liquidate && flagged === wasFlagged) return NOTHING_CROSSED;
    return {
      liquidate: liquidate ? [key] : [],
      flagged: flagged && !wasFlagged ? [key] : [],
      cleared: !flagged && wasFlagged ? [key] : [],
    };
  }

  /** Removes an account (repaid, or locked for liquidation); its flag goes with it. */
  remove(key: string): void {
    const e = this.#entries.get(key);
    if (e === undefined || !e.linked) return;
    this.#unlink(e);
    e.flagged = false;
  }

  /** Changes at every change of its trigger sets (unique across indexes). */
  get version(): number {
    return this.#version;
  }

  /**
   * The highest price at which an entry holding at or below its price (`le`) holds, and the
   * lowest at which one holding at or above (`ge`) does: a mark strictly between the two crosses
   * nothing (`move` returns `NOTHING_CROSSED` and changes nothing).
   */
  lowEdge(): number {
    return Math.max(
      this.#notice.le.maxPrice() ?? -Infinity,
      this.#clear.le.maxPrice() ?? -Infinity,
      this.#liquidation.le.maxPrice() ?? -Infinity,
    );
  }

  highEdge(): number {
    return Math.min(
      this.#notice.ge.minPrice() ?? Infinity,
      this.#clear.ge.minPrice() ?? Infinity,
      this.#liquidation.ge.minPrice() ?? Infinity,
    );
  }

  /**
   * A new mark: the accounts it puts at or below the liquidation line (they stay indexed until the
   * caller removes them), and the notice flags it sets and clears (applied here). Each list in key
   * order.
   */
  move(mark: number): Crossed {
    if (!this.#notice.any(mark) && !this.#clear.any(mark) && !this.#liquidation.any(mark))
      return NOTHING_CROSSED;
    const flagged = this.#notice.at(mark).sort();
    const cleared = this.#clear.at(mark).sort();
    for (const key of flagged) this.#reflag(this.#entries.get(key) as IndexEntry, true);
    for (const key of cleared) this.#reflag(this.#entries.get(key) as IndexEntry, false);
    return { liquidate: this.#liquidation.at(mark).sort(), flagged, cleared };
  }

  /** What `move` would report as to liquidate, by scanning every account (tests, benchmark baseline). */
  scan(mark: number): string[] {
    const out: string[] = [];
    for (const [key, e] of this.#entries) if (holds(e.triggers?.liquidation, mark)) out.push(key);
    return out.sort();
  }

  /** Moves a flagged account between the notice and the clear sets (its liquidation entry stays). */
  #reflag(e: IndexEntry, flagged: boolean): void {
    this.#version = nextVersion++;
    if (flagged) {
      this.#notice.delete(e.nOp, e.nTicks, e.key);
      this.#clear.add(e.cOp, e.cTicks, e.key);
    } else {
      this.#clear.delete(e.cOp, e.cTicks, e.key);
      this.#notice.add(e.nOp, e.nTicks, e.key);
    }
    e.flagged = flagged;
  }

  #link(e: IndexEntry): void {
    this.#version = nextVersion++;
    e.linked = true;
    this.#size++;
    this.#liquidation.add(e.lOp, e.lTicks, e.key);
    if (e.flagged) this.#clear.add(e.cOp, e.cTicks, e.key);
    else this.#notice.add(e.nOp, e.nTicks, e.key);
  }

  #unlink(e: IndexEntry): void {
    this.#version = nextVersion++;
    e.linked = false;
    this.#size--;
    this.#liquidation.delete(e.lOp, e.lTicks, e.key);
    if (e.flagged) this.#clear.delete(e.cOp, e.cTicks, e.key);
    else this.#notice.delete(e.nOp, e.nTicks, e.key);
  }
}

/** Cross accounts per coin they hold or owe: the ones a new mark of a market must re-value. */
export class CrossWatch {
  readonly #byCoin = new Map<string, Set<string>>();
  readonly #coins = new Map<string, readonly string[]>();

  /** Sets the coins an account holds or owes (empty: it leaves the watch). */
  update(key: string, coins: readonly string[]): void {
    for (const c of this.#coins.get(key) ?? []) this.#byCoin.get(c)?.delete(key);
    if (coins.length === 0) this.#coins.delete(key);
    else this.#coins.set(key, [...coins]);
    for (const c of coins) {
      let set = this.#byCoin.get(c);
      if (set === undefined) this.#byCoin.set(c, (set = new Set()));
      set.add(key);
    }
  }

  /** The accounts holding or owing any of `coins`, in key order. */
  touched(coins: readonly string[]): string[] {
    const out = new Set<string>();
    for (const c of coins) for (const k of this.#byCoin.get(c) ?? []) out.add(k);
    return [...out].sort();
  }
}
