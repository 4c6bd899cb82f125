/**
 * @module demo-state — the engine's record of the demo market: whether it was started (with its
 * faucet's allowances) and stopped for good, which users are demo users, and the faucet itself,
 * whose hourly allowance is enforced here so that replay gives the same answers. Pure and
 * synchronous like the engine that calls it; a faucet credit is a deposit made through funds.
 * It holds the replay record too (replay-record.ts): the sandbox's whole record in the engine.
 * docs/sandbox.md describes the rules.
 */
import {
  DEMO_COMMAND_TYPES,
  type CreditDeposit,
  type DemoCommand,
  type DemoFaucet,
  type FaucetAllowance,
  type MarkDemoUser,
  type SequencedCommand,
  type StartDemo,
} from '../domain/commands.ts';
import type { EngineEvent } from '../domain/events.ts';
import { formatUnitsTrim, type CoinUnits } from '../domain/money.ts';
import type { ResultName } from '../domain/result-codes.ts';
import type { ApplyResult } from './results.ts';
import type { LedgerCoin } from './funds.ts';
import { ReplayRecord, type ReplaySnapshot, type ReplayView } from './replay-record.ts';

const DEMO_TYPES: ReadonlySet<string> = new Set(DEMO_COMMAND_TYPES);

/** Whether a command is one of the demo's (the engine's dispatch). */
export const isDemoCommand = (cmd: { readonly type: string }): cmd is DemoCommand => DEMO_TYPES.has(cmd.type);

/** The faucet's window: allowances are per user, coin and UTC clock hour. */
export const FAUCET_WINDOW_MS = 3_600_000;

/** What the demo needs of the engine: users, coins, and a deposit credited through funds. */
export interface DemoLedger {
  hasUser(userId: number): boolean;
  hasMarket(name: string): boolean;
  coin(name: string): LedgerCoin | undefined;
  /** Applies a CreditDeposit as funds does (its events appended to the command's). */
  credit(cmd: CreditDeposit): ApplyResult;
}

/** The read side of the demo, for the API, the CLI and the demo's bots. */
export interface DemoView {
  /** The demo market was started on this venue (StartDemo). */
  readonly started: boolean;
  /** The bots were stopped for good (StopDemo). */
  readonly stopped: boolean;
  isDemoUser(userId: number): boolean;
  /** Demo users, by id. */
  demoUsers(): number[];
  /** The faucet's allowances, in the order StartDemo gave them. */
  faucet(): readonly FaucetAllowance[];
  /** What the user took of the coin in the UTC hour of `time`. */
  faucetUsed(userId: number, coin: string, time: number): CoinUnits;
  /** Every replay of historical data (StartReplay), oldest first. */
  replays(): ReplayView[];
}

/** The plain-data form of the demo state (part of the engine snapshot once the demo started). */
export interface DemoSnapshot {
  readonly stopped: boolean;
  readonly faucet: FaucetAllowance[];
  readonly users: number[];
  /** [userId, coin, hour start (ms), used] */
  readonly used: [number, string, number, number][];
  /** Present only when the demo was never started but a replay was (a replay sandbox without the demo). */
  readonly started?: false;
  /** The replays, once one started. */
  readonly replays?: ReplaySnapshot[];
}

const refused = (result: ResultName, message?: string): ApplyResult =>
  message === undefined ? { result, events: [] } : { result, message, events: [] };
const duplicate = (): ApplyResult => ({ result: 'OK', events: [], duplicate: true });

export class Demo implements DemoView {
  readonly #ledger: DemoLedger;
  #started = false;
  #stopped = false;
  #faucet: FaucetAllowance[] = [];
  readonly #users = new Set<number>();
  /** `${userId}:${coin}` → what was taken in the hour starting at `hour`. */
  readonly #used = new Map<string, { hour: number; used: number }>();
  readonly #replay: ReplayRecord;

  constructor(ledger: DemoLedger) {
    this.#ledger = ledger;
    this.#replay = new ReplayRecord((name) => ledger.hasMarket(name));
  }

  replays(): ReplayView[] {
    return this.#replay.replays();
  }

  get started(): boolean {
    return this.#started;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  isDemoUser(userId: number): boolean {
    return this.#users.has(userId);
  }

  demoUsers(): number[] {
    return [...this.#users].sort((a, b) => a - b);
  }

  faucet(): readonly FaucetAllowance[] {
    return this.#faucet;
  }

  faucetUsed(userId: number, coin: string, time: number): CoinUnits {
    const u = this.#used.get(`${userId}:${coin}`);
    return u !== undefined && u.hour === hourOf(time) ? u.used : 0;
  }

  /** Applies one demo command, appending its events to `events`. A refusal changes nothing. */
  apply(cmd: DemoCommand & Pick<SequencedCommand, 'seq'>, time: number, events: EngineEvent[]): ApplyResult {
    switch (cmd.type) {
      case 'StartDemo':
        return this.#start(cmd, time, events);
      case 'MarkDemoUser':
        return this.#mark(cmd, time, events);
      case 'StopDemo':
        if (!this.#started) return refused('INVALID_STATE', 'the demo market was never started here');
        if (this.#stopped) return duplicate();
        this.#stopped = true;
        events.push({ type: 'DemoStopped', time });
        return { result: 'OK', events };
      case 'DemoFaucet':
        return this.#faucetCredit(cmd, cmd.seq, time);
      case 'StartReplay':
        return this.#replay.start(cmd, cmd.seq, time, events);
      case 'EndReplay':
        return this.#replay.end(cmd, time, events);
    }
  }

  /**
   * StartDemo, once per venue: INVALID_STATE if it was started before. Each allowance names a
   * known coin once, with a positive whole number of units (UNKNOWN_COIN, INVALID_PARAMETER,
   * INVALID_AMOUNT). Event: DemoStarted.
   */
  #start(cmd: StartDemo, time: number, events: EngineEvent[]): ApplyResult {
    if (this.#started) return refused('INVALID_STATE', 'the demo market was started before');
    if (!Array.isArray(cmd.faucet)) return refused('INVALID_PARAMETER', 'faucet must be a list');
    const seen = new Set<string>();
    for (const a of cmd.faucet) {
      if (this.#ledger.coin(a.coin) === undefined) return refused('UNKNOWN_COIN', `unknown coin '${a.coin}'`);
      if (seen.has(a.coin)) return refused('INVALID_PARAMETER', `faucet names ${a.coin} twice`);
      if (!Number.isSafeInteger(a.perHour) || a.perHour <= 0)
        return refused(
          'INVALID_AMOUNT',
          `the faucet's ${a.coin} allowance must be a positive number of units`,
        );
      seen.add(a.coin);
    }
    this.#started = true;
    this.#faucet = cmd.faucet.map((a) => ({ coin: a.coin, perHour: a.perHour }));
    events.push({ type: 'DemoStarted', faucet: this.#faucet, time });
    return { result: 'OK', events };
  }

  /** MarkDemoUser: INVALID_STATE before StartDemo, USER_NOT_FOUND; a repeat is OK with `duplicate`. Event: DemoUserMarked. */
  #mark(cmd: MarkDemoUser, time: number, events: EngineEvent[]): ApplyResult {
    if (!this.#started) return refused('INVALID_STATE', 'the demo market was never started here');
    if (!this.#ledger.hasUser(cmd.userId)) return refused('USER_NOT_FOUND');
    if (this.#users.has(cmd.userId)) return duplicate();
    this.#users.add(cmd.userId);
    events.push({ type: 'DemoUserMarked', userId: cmd.userId, time });
    return { result: 'OK', events };
  }

  /**
   * DemoFaucet: credits a demo user `amount` of a coin as a deposit `faucet:<seq>` with the note
   * `demo faucet`, if the user's takings of that coin in this UTC hour stay within the allowance.
   * Results: USER_NOT_FOUND; PERMISSION_DENIED (not a demo user); UNKNOWN_COIN;
   * INVALID_PARAMETER (a coin the faucet does not give); INVALID_AMOUNT; FAUCET_LIMIT (naming
   * what is left and when the hour ends); and the deposit's own (VALUE_OUT_OF_RANGE).
   * Events: BalanceChanged (deposit), DepositUpdated (credited).
   */
  #faucetCredit(cmd: DemoFaucet, seq: number, time: number): ApplyResult {
    if (!this.#ledger.hasUser(cmd.userId)) return refused('USER_NOT_FOUND');
    if (!this.#users.has(cmd.userId))
      return refused('PERMISSION_DENIED', 'the faucet serves demo users only');
    const coin = this.#ledger.coin(cmd.coin);
    if (coin === undefined) return refused('UNKNOWN_COIN', `unknown coin '${String(cmd.coin)}'`);
    const allowance = this.#faucet.find((a) => a.coin === cmd.coin);
    if (allowance === undefined) {
      const coins = this.#faucet.map((a) => a.coin).join(', ');
      return refused('INVALID_PARAMETER', `the faucet gives no ${cmd.coin}: it gives ${coins || 'nothing'}`);
    }
    if (!Number.isSafeInteger(cmd.amount) || cmd.amount <= 0)
      return refused('INVALID_AMOUNT', 'amount must be a positive number of units');
    const hour = hourOf(time);
    const used = this.faucetUsed(cmd.userId, cmd.coin, time);
    if (cmd.amount > allowance.perHour - used) {
      const scale = coin.spec.unitDecimal;
      const left = formatUnitsTrim(allowance.perHour - used, scale);
      return refused(
        'FAUCET_LIMIT',
        `the faucet gives ${formatUnitsTrim(allowance.perHour, scale)} ${cmd.coin} per hour; ` +
          `${left} left until ${new Date(hour + FAUCET_WINDOW_MS).toISOString()}`,
      );
    }
    const r = this.#ledger.credit({
      type: 'CreditDeposit',
      depositId: `faucet:${seq}`,
      userId: cmd.userId,
      coin: cmd.coin,
      amount: cmd.amount,
      remark: 'demo faucet',
    });
    if (r.result === 'OK') this.#used.set(`${cmd.userId}:${cmd.coin}`, { hour, used: used + cmd.amount });
    return r;
  }

  /** Checks the demo's own rules; throws on the first broken one. */
  assertInvariants(): void {
    if (this.#stopped && !this.#started) throw new Error('demo stopped but never started');
    for (const userId of this.#users)
      if (!this.#ledger.hasUser(userId)) throw new Error(`demo user ${userId} does not exist`);
    for (const [key, u] of this.#used) {
      const coin = key.slice(key.indexOf(':') + 1);
      const allowance = this.#faucet.find((a) => a.coin === coin);
      if (allowance === undefined || u.used < 0 || u.used > allowance.perHour)
        throw new Error(`faucet usage ${key} is ${u.used}, outside its allowance`);
    }
  }

  /**
   * The state as plain data in canonical order, or undefined before the demo or a replay started
   * (no trace in the snapshot).
   */
  snapshot(): DemoSnapshot | undefined {
    if (!this.#started && this.#replay.isEmpty) return undefined;
    return {
      ...(!this.#started && { started: false as const }),
      ...(!this.#replay.isEmpty && { replays: this.#replay.snapshot() }),
      stopped: this.#stopped,
      faucet: this.#faucet.map((a) => ({ ...a })),
      users: this.demoUsers(),
      used: [...this.#used]
        .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .map(([key, u]) => {
          const i = key.indexOf(':');
          return [Number(key.slice(0, i)), key.slice(i + 1), u.hour, u.used];
        }),
    };
  }

  /** Loads a snapshot's demo state into this (fresh) demo. */
  load(s: DemoSnapshot): void {
    this.#started = s.started ?? true;
    if (s.replays !== undefined) this.#replay.load(s.replays);
    this.#stopped = s.stopped;
    this.#faucet = s.faucet.map((a) => ({ ...a }));
    for (const userId of s.users) this.#users.add(userId);
    for (const [userId, coin, hour, used] of s.used) this.#used.set(`${userId}:${coin}`, { hour, used });
  }
}

/** The start of the UTC hour containing `time`. */
function hourOf(time: number): number {
  return time - (((time % FAUCET_WINDOW_MS) + FAUCET_WINDOW_MS) % FAUCET_WINDOW_MS);
}
