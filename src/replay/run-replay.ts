/**
 * @module run-replay — the replays of a started sandbox (docs/sandbox.md, "Replay"): those the
 * journal says are playing resume where the journal shows they got to (their files read again
 * and checked against the hashes journaled), and `--replay <files>` starts a new one with a
 * StartReplay command carrying its inputs — unless the journal holds that same replay already.
 * A replay that cannot start is an error in the log, never a failed start of the venue.
 */
import type { Command } from '../domain/commands.ts';
import type { Log } from '../domain/log.ts';
import type { ApplyResult } from '../engine/engine.ts';
import type { ReplayView } from '../engine/replay-record.ts';
import type { VenueState } from '../sequencer/venue-ports.ts';
import { loadReplayInputs, type ReplayInput } from './load.ts';
import { playedUpTo, ReplayPlayer } from './replay-market.ts';
import { planReplay, type ReplayPlan } from './replay-plan.ts';

export interface ReplayBoot {
  /** `--replay`'s arguments (none: only resume). */
  readonly args: readonly string[];
  readonly engine: VenueState;
  submit(command: Command): Promise<ApplyResult>;
  /** The venue's clock: its time, and a speed clock's wall delay. */
  readonly clock: {
    now(): number;
    readonly sequencer: { readonly timerDelay?: (venueMs: number) => number };
  };
  readonly log: Log;
}

/** The replays running on a venue. */
export class Replays {
  readonly #boot: ReplayBoot;
  readonly #players = new Map<number, ReplayPlayer>();

  constructor(boot: ReplayBoot) {
    this.#boot = boot;
  }

  /** Each replay and how far it got. */
  status(): { replayId: number; played: number; total: number; finished: boolean }[] {
    return [...this.#players.values()].map((p) => p.progress);
  }

  /** The player of a replay (tests and benchmarks wait on it). */
  player(replayId: number): ReplayPlayer | undefined {
    return this.#players.get(replayId);
  }

  /**
   * Starts replaying `args` (the same files as a replay in the journal: that one, not a new
   * one). Throws with the loaders' message for a malformed file, or the engine's refusal; then
   * nothing was journaled.
   */
  async start(args: readonly string[]): Promise<ReplayView> {
    const { engine } = this.#boot;
    const plan = this.#plan(loadReplayInputs(args));
    const same = engine.demo.replays().find((r) => sameSources(r, plan));
    if (same !== undefined) return same;
    const r = await this.#boot.submit({
      type: 'StartReplay',
      sources: plan.sources,
      historyStart: plan.historyStart,
    });
    if (r.result !== 'OK') throw new Error(`replay refused: ${r.result} ${r.message ?? ''}`);
    const started = r.events.find((e) => e.type === 'ReplayStarted');
    const replay = engine.demo.replays().find((v) => v.replayId === started?.replayId) as ReplayView;
    this.#play(replay, plan, 0);
    return replay;
  }

  /** Resumes every replay the journal says is playing. */
  resume(): void {
    for (const replay of this.#boot.engine.demo.replays()) {
      if (replay.ended !== undefined || this.#players.has(replay.replayId)) continue;
      try {
        const inputs = loadReplayInputs(replay.sources.map((s) => `${s.market}=${s.file}`));
        const changed = replay.sources.find((s, i) => inputs[i]?.sha256 !== s.sha256);
        if (changed !== undefined)
          throw new Error(`${changed.file} is not the file replayed (its SHA-256 changed)`);
        const plan = this.#plan(inputs);
        const from = playedUpTo(this.#boot.engine, replay.replayId, plan.trades);
        this.#boot.log.info(`replay ${replay.replayId}: resumed at trade ${from} of ${plan.trades.length}`);
        this.#play(replay, plan, from);
      } catch (error) {
        this.#boot.log.error(`replay ${replay.replayId} not resumed: ${(error as Error).message}`);
      }
    }
  }

  /** Stops every player after its commands in flight (the replays stay playing in the journal: a restart resumes them). */
  async stop(): Promise<void> {
    await Promise.all([...this.#players.values()].map((p) => p.stop()));
  }

  #plan(inputs: ReplayInput[]): ReplayPlan {
    const { engine } = this.#boot;
    return planReplay(inputs, engine.markets(), (coin) => engine.coin(coin)?.unitDecimal ?? 8);
  }

  #play(replay: ReplayView, plan: ReplayPlan, from: number): void {
    const { engine, submit, clock, log } = this.#boot;
    const delay = clock.sequencer.timerDelay;
    const player = new ReplayPlayer(
      {
        engine,
        submit: (c) => submit(c),
        now: () => clock.now(),
        ...(delay === undefined ? {} : { wallDelay: delay }),
        log: (message) => log.info(message),
      },
      replay.replayId,
      plan,
      from,
    );
    this.#players.set(replay.replayId, player);
    const files = replay.sources.map((s) => `${s.file} (${s.market})`).join(', ');
    log.info(`replay ${replay.replayId}: playing ${plan.trades.length} trades of ${files}`);
    void player.start().then(
      async () => {
        const { played, finished } = player.progress;
        if (!finished) return;
        await submit({ type: 'EndReplay', replayId: replay.replayId, reason: 'finished', played });
        log.info(
          `replay ${replay.replayId}: finished, ${played} trades played (${player.refusals} refusals)`,
        );
      },
      (error: unknown) => log.error(`replay ${replay.replayId} stopped: ${(error as Error).message}`),
    );
  }
}

/** Whether a journaled replay has the plan's files, hashes and markets. */
function sameSources(replay: ReplayView, plan: ReplayPlan): boolean {
  return (
    replay.sources.length === plan.sources.length &&
    replay.sources.every((s, i) => {
      const p = plan.sources[i];
      return p !== undefined && p.file === s.file && p.sha256 === s.sha256 && p.market === s.market;
    })
  );
}

/** Resumes the journal's replays and starts `--replay`'s; undefined when there is none. */
export async function runReplay(boot: ReplayBoot): Promise<Replays | undefined> {
  if (boot.args.length === 0 && boot.engine.demo.replays().every((r) => r.ended !== undefined))
    return undefined;
  const replays = new Replays(boot);
  replays.resume();
  if (boot.args.length > 0) {
    try {
      const replay = await replays.start(boot.args);
      if (replay.ended !== undefined)
        boot.log.info(`replay ${replay.replayId} of these files was played to its end on this venue before`);
    } catch (error) {
      boot.log.error(`replay not started: ${(error as Error).message}`);
    }
  }
  return replays;
}
