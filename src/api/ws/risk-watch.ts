/**
 * @module risk-watch — which margin accounts' risk state changed (issue 15: the notice flag, the
 * liquidation lock), for the users whose margin pushes someone watches. A mark can cross an
 * account's notice line without any event of the account's owner (other people's trades move it,
 * or the timer ages its window), so the fan-out asks at each flush; the watch compares the state
 * only of the accounts in markets whose mark or last price moved since it last looked, so a flush
 * without a price move costs a look at each market's two prices.
 *
 * The state is `riskState` (private-payloads.ts): `level` (1 normal, 2 flagged at the notice line,
 * 3 locked for liquidation) and `repayLock`. Accounts are named as the fan-out names them
 * (`isolated:<market>`, `cross`).
 */
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { CROSS_KEY, ISOLATED_PREFIX, riskState } from './private-payloads.ts';

/** An account whose risk state changed, with the coins its push names. */
export interface RiskChange {
  readonly userId: number;
  readonly account: string;
  readonly coins: readonly string[];
}

export class RiskWatch {
  readonly #engine: VenueState;
  /** Watched users: how many topics watch each, and each account's state last shown. */
  readonly #users = new Map<number, { topics: number; shown: Map<string, string> }>();
  /** Each market's `mark/last price` as last seen. */
  readonly #prices = new Map<string, string>();

  constructor(engine: VenueState) {
    this.#engine = engine;
  }

  /** Whether any user is watched (the fan-out then looks at every flush). */
  get watching(): boolean {
    return this.#users.size > 0;
  }

  /** A topic of the user's margin pushes was opened: its accounts' states are taken as shown. */
  watch(userId: number): void {
    const user = this.#users.get(userId);
    if (user !== undefined) {
      user.topics++;
      return;
    }
    if (this.#users.size === 0) this.#notePrices();
    const shown = new Map<string, string>();
    this.#users.set(userId, { topics: 1, shown });
    for (const account of this.#accounts(userId)) shown.set(account.key, this.#state(userId, account.key));
  }

  /** A topic of the user's margin pushes was closed. */
  unwatch(userId: number): void {
    const user = this.#users.get(userId);
    if (user !== undefined && --user.topics === 0) this.#users.delete(userId);
  }

  /** A push showed the account as it is now. */
  shown(userId: number, account: string): void {
    this.#users.get(userId)?.shown.set(account, this.#state(userId, account));
  }

  /** The watched accounts whose state differs from the one last shown, in markets whose price moved. */
  changes(): RiskChange[] {
    if (this.#users.size === 0) return [];
    const moved = this.#notePrices();
    if (moved.size === 0) return [];
    const out: RiskChange[] = [];
    for (const [userId, user] of this.#users) {
      for (const account of this.#accounts(userId)) {
        // A cross account is valued through every market; an isolated one through its own.
        if (account.market !== undefined && !moved.has(account.market)) continue;
        const state = this.#state(userId, account.key);
        if (user.shown.get(account.key) === state) continue;
        user.shown.set(account.key, state);
        out.push({ userId, account: account.key, coins: account.coins });
      }
    }
    return out;
  }

  /** Notes every market's prices; returns the markets whose mark or last price changed. */
  #notePrices(): Set<string> {
    const moved = new Set<string>();
    for (const m of this.#engine.markets()) {
      const prices = `${this.#engine.risk.markPrice(m.name) ?? ''}/${this.#engine.lastPrice(m.name)}`;
      if (this.#prices.get(m.name) !== prices) {
        this.#prices.set(m.name, prices);
        moved.add(m.name);
      }
    }
    return moved;
  }

  #accounts(userId: number): { key: string; market: string | undefined; coins: string[] }[] {
    return this.#engine.margin.accountsOf(userId).map((a) => ({
      key: a.acctType === 1 ? `${ISOLATED_PREFIX}${a.market}` : CROSS_KEY,
      market: a.acctType === 1 ? a.market : undefined,
      coins: a.coins.map((c) => c.coin),
    }));
  }

  #state(userId: number, account: string): string {
    const s = riskState(this.#engine, userId, account);
    return s === undefined ? '' : `${s.level}/${s.repayLock}`;
  }
}
