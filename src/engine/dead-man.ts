/**
 * @module dead-man — the dead-man switch (cancelAllOrdersAfter): deadlines per user and market,
 * armed by CancelAllOrdersAfter and fired by the scheduler's FireTimers command, so that replay
 * fires them exactly as they fired live.
 */
import type { CancelAllOrdersAfter } from '../domain/commands.ts';
import type { CancelReason } from '../domain/events.ts';
import type { VenueSettings } from '../domain/specs.ts';
import { refused, type CommandContext } from './command-context.ts';
import type { ApplyResult } from './results.ts';

/** What the switch needs: whether users and markets exist, and a way to cancel a user's orders in a market. */
export interface DeadManPort {
  hasUser(userId: number): boolean;
  hasMarket(market: string): boolean;
  /** Cancels the user's resting orders in the market, oldest first; returns how many. */
  cancelAllIn(userId: number, market: string, reason: CancelReason): number;
}

interface Deadline {
  readonly userId: number;
  readonly market: string;
  deadline: number;
}

export class DeadManSwitch {
  readonly #ctx: CommandContext;
  readonly #settings: VenueSettings;
  readonly #port: DeadManPort;
  /** `${userId}:${market}` → deadline. */
  readonly #deadlines = new Map<string, Deadline>();

  constructor(ctx: CommandContext, settings: VenueSettings, port: DeadManPort) {
    this.#ctx = ctx;
    this.#settings = settings;
    this.#port = port;
  }

  /**
   * CancelAllOrdersAfter: arms or refreshes the user's deadline in the market, `cancelAllAfterMs`
   * after the command's time. Results: OK with `deadline`; USER_NOT_FOUND, UNKNOWN_MARKET.
   */
  arm(cmd: CancelAllOrdersAfter): ApplyResult {
    if (!this.#port.hasUser(cmd.userId)) return refused('USER_NOT_FOUND');
    if (!this.#port.hasMarket(cmd.market)) return refused('UNKNOWN_MARKET', `unknown market '${cmd.market}'`);
    const ctx = this.#ctx;
    const deadline = ctx.time + this.#settings.cancelAllAfterMs;
    const key = `${cmd.userId}:${cmd.market}`;
    const existing = this.#deadlines.get(key);
    if (existing !== undefined) existing.deadline = deadline;
    else this.#deadlines.set(key, { userId: cmd.userId, market: cmd.market, deadline });
    ctx.events.push({ type: 'DeadmanArmed', userId: cmd.userId, market: cmd.market, deadline });
    return { result: 'OK', events: ctx.events, deadline };
  }

  /**
   * FireTimers: fires every deadline at or before the command's time, earliest first (then by
   * user and market): the user's open orders in that market are cancelled, oldest first, then
   * DeadmanFired. Result: OK.
   */
  fire(): ApplyResult {
    const ctx = this.#ctx;
    const due = [...this.#deadlines.values()]
      .filter((d) => d.deadline <= ctx.time)
      .sort((a, b) => a.deadline - b.deadline || a.userId - b.userId || (a.market < b.market ? -1 : 1));
    for (const d of due) {
      this.#deadlines.delete(`${d.userId}:${d.market}`);
      const cancelled = this.#port.cancelAllIn(d.userId, d.market, 'deadman');
      ctx.events.push({
        type: 'DeadmanFired',
        userId: d.userId,
        market: d.market,
        cancelled,
        time: ctx.time,
      });
    }
    return { result: 'OK', events: ctx.events };
  }

  /** The earliest armed deadline, or `undefined`. The scheduler fires timers then. */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const d of this.#deadlines.values()) if (next === undefined || d.deadline < next) next = d.deadline;
    return next;
  }

  /** The armed deadlines as `[`${userId}:${market}`, deadline]` entries (unsorted). */
  entries(): [string, number][] {
    return [...this.#deadlines].map(([k, d]) => [k, d.deadline]);
  }

  /** Arms deadlines from their snapshot entries. */
  load(entries: readonly [string, number][]): void {
    for (const [k, deadline] of entries) {
      const i = k.indexOf(':');
      this.#deadlines.set(k, { userId: Number(k.slice(0, i)), market: k.slice(i + 1), deadline });
    }
  }
}

/** The earliest of timer deadlines (ms), or undefined when none is set: what the scheduler fires next. */
export function earliest(deadlines: readonly (number | undefined)[]): number | undefined {
  let next: number | undefined;
  for (const t of deadlines) if (t !== undefined && (next === undefined || t < next)) next = t;
  return next;
}
