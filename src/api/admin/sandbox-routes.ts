/**
 * @module sandbox-routes — the operator's demo and clock API (under the admin token, used by the
 * `bourse demo`, `bourse faucet` and `bourse clock` commands): stop the demo's bots for good, see
 * the demo, credit a demo user from the faucet, read the clock, advance a manual clock and change
 * a speed clock's speed.
 * docs/sandbox.md describes them.
 */
import { formatUnitsTrim, parseDecimal } from '../../domain/money.ts';
import { MAX_CLOCK_SPEED, MIN_CLOCK_SPEED, parseSpeed } from '../../domain/clock-speed.ts';
import type { SandboxClock } from '../../sequencer/venue-clock.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { param, paramText, type ApiReply, type Route, type VenuePort } from '../http/types.ts';
import { readAnyCaseCoin } from '../edge/readers.ts';
import { fail, fromResult, ok, userOf } from './admin-reply.ts';
import { quoted } from '../edge/refusal.ts';
import type { SavePointSetup } from './save-point-routes.ts';

export interface SandboxAdminDeps {
  readonly venue: VenuePort;
  readonly clock: SandboxClock;
  /** The longest advance accepted (ms). */
  readonly maxAdvanceMs: number;
  /** The save points (save-point-routes.ts), on a sandbox only. */
  readonly saves?: SavePointSetup | undefined;
}

/** ms in each unit `parseDuration` knows. */
const DURATION_UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * `1h`, `90m`, `1h30m`, `2d`, `500ms`, `1w` → ms; undefined for anything else (a sign, decimals,
 * spaces, a unit given twice, a total below 1 ms or beyond 2^53).
 */
export function parseDuration(text: string): number | undefined {
  if (text.length > 40 || !/^(\d+(ms|s|m|h|d|w))+$/.test(text)) return undefined;
  let total = 0;
  const seen = new Set<string>();
  for (const [, digits, unit] of text.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) {
    if (seen.has(unit as string)) return undefined;
    seen.add(unit as string);
    total += Number(digits) * (DURATION_UNITS[unit as string] as number);
  }
  return Number.isSafeInteger(total) && total >= 1 ? total : undefined;
}

/** The demo as the operator sees it: started, stopped, its users by name, the faucet's allowances. */
export function demoStatus(engine: VenueState): Record<string, unknown> {
  const demo = engine.demo;
  return {
    started: demo.started,
    stopped: demo.stopped,
    users: demo.demoUsers().map((id) => engine.userName(id) ?? String(id)),
    faucet: demo.faucet().map((a) => ({
      coin: a.coin,
      perHour: formatUnitsTrim(a.perHour, engine.coin(a.coin)?.unitDecimal ?? 0),
    })),
  };
}

const clockBody = (clock: SandboxClock): Record<string, unknown> => ({
  mode: clock.mode,
  time: clock.now(),
  iso: new Date(clock.now()).toISOString(),
  ...(clock.speed === undefined ? {} : { speed: clock.speed() }),
});

/** The routes (unguarded: admin-routes.ts puts them behind the admin token). */
export function sandboxAdminRoutes(deps: SandboxAdminDeps): Route[] {
  const { venue, clock } = deps;
  const engine = venue.engine;
  return [
    {
      path: '/admin/demo/status',
      handler: () => ok(demoStatus(engine)),
    },
    {
      path: '/admin/demo/stop',
      handler: async () => {
        const r = await venue.submit({ type: 'StopDemo' });
        return fromResult(r, { duplicate: r.duplicate === true });
      },
    },
    {
      path: '/admin/demo/faucet',
      handler: async (request): Promise<ApiReply> => {
        const userId = userOf(venue, request);
        const coin = readAnyCaseCoin(engine, 'coin', paramText(request, 'coin'));
        const amountText = param(request, 'amount') ?? '';
        const amount = parseDecimal(amountText, coin.unitDecimal);
        if (amount === undefined || amount <= 0) {
          fail(
            'INVALID_AMOUNT',
            `amount ${quoted(amountText)} must be a positive decimal with at most ${coin.unitDecimal} decimals`,
          );
        }
        const r = await venue.submit({ type: 'DemoFaucet', userId, coin: coin.name, amount });
        const deposit = r.events.find((e) => e.type === 'DepositUpdated');
        const balance = engine.balance(userId, coin.name);
        return fromResult(r, {
          depositId: deposit?.depositId,
          available: formatUnitsTrim(balance?.available ?? 0, coin.unitDecimal),
        });
      },
    },
    {
      path: '/admin/clock',
      handler: () => ok(clockBody(clock)),
    },
    {
      path: '/admin/clock/advance',
      handler: async (request): Promise<ApiReply> => {
        if (clock.mode !== 'manual') {
          fail(
            'INVALID_STATE',
            `the venue runs on ${clock.mode === 'speed' ? 'a speed clock' : 'the wall clock'}: ` +
              'only a venue started with --clock=manual can be advanced',
          );
        }
        const text = param(request, 'by') ?? '';
        const ms = parseDuration(text);
        if (ms === undefined || ms > deps.maxAdvanceMs) {
          // Said in the words of the person advancing (the CLI's <duration>), not the form field's name.
          const what = text === '' ? 'no duration given' : `${quoted(text)} is not a duration`;
          fail(
            'INVALID_PARAMETER',
            `${what}: give a number with its unit, such as 30s, 15m, 1h, 1h30m, 2d or 1w ` +
              `(ms s m h d w), from 1 ms to ${deps.maxAdvanceMs / 86_400_000} days`,
          );
        }
        const done = await clock.advance(ms);
        return ok({ ...clockBody(clock), from: done.from, timerSteps: done.timerSteps });
      },
    },
    {
      path: '/admin/clock/speed',
      handler: async (request): Promise<ApiReply> => {
        if (clock.setSpeed === undefined) {
          return fail(
            'INVALID_STATE',
            `the venue runs on ${clock.mode === 'manual' ? 'a manual clock' : 'the wall clock'}: ` +
              'only a venue started with --clock=speed:<n> (a sandbox) changes speed',
          );
        }
        const text = param(request, 'speed') ?? '';
        const speed = parseSpeed(text);
        if (speed === undefined) {
          const what = text === '' ? 'no speed given' : `${quoted(text)} is not a speed`;
          return fail(
            'INVALID_PARAMETER',
            `${what}: give how many times faster than real time, a number from ${MIN_CLOCK_SPEED} ` +
              `to ${MAX_CLOCK_SPEED} with at most 3 decimals, such as 60 or 1000`,
          );
        }
        const done = await clock.setSpeed(speed);
        return ok({ ...clockBody(clock), from: done.from });
      },
    },
  ];
}
