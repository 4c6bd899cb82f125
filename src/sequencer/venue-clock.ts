/**
 * @module venue-clock — which clock stamps the venue's commands, from `--clock`: the wall clock,
 * a manual clock (manual-clock.ts) or a speed clock (speed-clock.ts); what the sequencer needs of
 * it, and the operator's view of it (the admin routes' SandboxClock). docs/sandbox.md.
 */
import type { Log } from '../domain/log.ts';
import { ManualClock, type ClockedVenue } from './manual-clock.ts';
import { clockMode, parseSpeed, type ClockMode, type ClockSetting } from '../domain/clock-speed.ts';
import { SpeedClock } from './speed-clock.ts';

/** The venue's clock as the operator sees it. */
export interface SandboxClock {
  /** `manual`: time moves only when advanced; `speed`: n times real time (`--clock=speed:<n>`). */
  readonly mode: ClockMode;
  now(): number;
  /** Moves a manual clock forward by `ms` (the caller has checked the range). */
  advance(ms: number): Promise<{ from: number; to: number; timerSteps: number }>;
  /** A speed clock's speed. */
  speed?(): number;
  /** Changes a speed clock's speed (the caller has checked the range). */
  setSpeed?(speed: number): Promise<{ from: number; to: number; time: number }>;
}

export interface VenueClock {
  readonly mode: ClockMode;
  /** Venue time (ms). */
  readonly now: () => number;
  /** The sequencer's clock options. */
  readonly sequencer: {
    readonly clock: () => number;
    readonly armTimers: boolean;
    readonly timerDelay?: (venueMs: number) => number;
  };
  /** The operator's view, over the venue's sequencer. */
  sandbox(venue: ClockedVenue & { rearmTimers(): void }): SandboxClock;
}

/**
 * The clock `--clock` asks for. A manual or speed clock starts where the journal left off
 * (`lastTime`), or at the wall clock if that is later (speed) or nothing was journaled. On a fresh
 * data directory (nothing journaled), `historyStart` — the first time of the history a sandbox is
 * told to replay — is where a manual or speed clock starts instead: the venue's times are the
 * history's.
 */
export function openVenueClock(
  setting: ClockSetting,
  lastTime: number | undefined,
  log: Log,
  historyStart?: number,
): VenueClock {
  const mode = clockMode(setting);
  const fromHistory = lastTime === undefined && historyStart !== undefined && mode !== 'real';
  if (fromHistory) lastTime = historyStart;
  const wall = fromHistory ? (historyStart as number) : Date.now();
  if (mode === 'manual') {
    const manual = new ManualClock(lastTime ?? wall);
    const iso = new Date(manual.now()).toISOString();
    log.info(
      { at: iso },
      `clock: manual, standing at ${iso}; it moves only with bourse clock advance <duration>`,
    );
    return {
      mode,
      now: manual.now,
      sequencer: { clock: manual.now, armTimers: false },
      sandbox: (venue) => ({ mode, now: manual.now, advance: (ms) => manual.advance(ms, venue) }),
    };
  }
  if (mode === 'speed') {
    const speed = new SpeedClock(Math.max(lastTime ?? wall, wall), parseSpeed(setting.slice(6)) as number);
    const iso = new Date(speed.now()).toISOString();
    log.info(
      { at: iso, speed: speed.speed },
      `clock: ${speed.speed} times real time from ${iso}; change it with bourse clock speed <n>`,
    );
    return {
      mode,
      now: speed.now,
      sequencer: { clock: speed.now, armTimers: true, timerDelay: speed.wallDelay },
      sandbox: (venue) => ({
        mode,
        now: speed.now,
        speed: () => speed.speed,
        setSpeed: (n) => speed.setSpeed(n, venue),
        advance: () => Promise.reject(new Error('a speed clock is not advanced')),
      }),
    };
  }
  if (lastTime !== undefined && lastTime > wall + 60_000) {
    log.warn(
      { lastTime: new Date(lastTime).toISOString() },
      `clock: the journal's last time ${new Date(lastTime).toISOString()} is ahead of the wall clock ` +
        '(a sandbox clock ran ahead): new commands carry that time until the wall clock passes it',
    );
  }
  return {
    mode,
    now: Date.now,
    sequencer: { clock: Date.now, armTimers: true },
    sandbox: () => ({ mode, now: Date.now, advance: () => Promise.reject(new Error('the wall clock')) }),
  };
}
