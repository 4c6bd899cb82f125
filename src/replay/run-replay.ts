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
  readonly engine: VenueState;
  submit(command: Command): Promise<ApplyResult>;
  /** Venue time (ms). */
  now(): number;
  /** The wall ms `venueMs` of venue time takes (a speed clock's); absent: as long. */
  wallDelay?(venueMs: number): number;
  readonly log: Log;
}

/** A replay as the operator sees it: the engine's record, and the player's progress when it plays here. */
export type ReplayStatus = ReplayView & { readonly played?: number; readonly total?: number };

/** What the admin API does with the replays of a running sandbox (src/api/admin/replay-routes.ts). */
export interface ReplayControl {
  status(): ReplayStatus[];
  start(args: readonly string[]): Promise<ReplayView>;
  /** Ends a playing replay for good (EndReplay stopped); throws for one that is not playing. */
  end(replayId: number): Promise<ReplayView>;
  /** Runs a restore or reset of the sandbox with the replays paused around it (Replays.aroundRestore). */
  aroundRestore<T>(restore: () => Promise<T>): Promise<T>;
}

/** The replays running on a venue. */
export class Replays implements ReplayControl {
  readonly #boot: ReplayBoot;
  readonly #players = new Map<number, ReplayPlayer>();

  constructor(boot: ReplayBoot) {
    this.#boot = boot;
  }

  /** Each replay of the journal, with how far it got when it plays here. */
  status(): ReplayStatus[] {
    return this.#boot.engine.demo.replays().map((r) => {
      const progress = this.#players.get(r.replayId)?.progress;
      return progress === undefined ? r : { ...r, played: progress.played, total: progress.total };
    });
  }

  async end(replayId: number): Promise<ReplayView> {
    const replay = this.#boot.engine.demo.replays().find((r) => r.replayId === replayId);
    if (replay === undefined || replay.ended !== undefined)
      throw new Error(`no replay ${replayId} is playing (bourse replay lists them)`);
    const player = this.#players.get(replayId);
    await player?.stop();
    const played = player?.progress.played ?? 0;
    const r = await this.#boot.submit({ type: 'EndReplay', replayId, reason: 'stopped', played });
    if (r.result !== 'OK') throw new Error(`EndReplay refused: ${r.result} ${r.message ?? ''}`);
    this.#players.delete(replayId);
    return this.#boot.engine.demo.replays().find((v) => v.replayId === replayId) as ReplayView;
  }

  /** Resumes the journal's replays and starts `args`' (a malformed file or a refusal is logged). */
  async run(args: readonly string[]): Promise<void> {
    this.resume();
    if (args.length === 0) return;
    try {
      const replay = await this.start(args);
      if (replay.ended !== undefined)
        this.#boot.log.info(
          `replay ${replay.replayId} of these files was played to its end on this venue before`,
        );
    } catch (error) {
      this.#boot.log.error(`replay not started: ${(error as Error).message}`);
    }
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

  /**
   * Runs `restore` (the RestoreSandbox of a restore or a reset) with the replays paused around
   * it: every player stops after its commands in flight, so none of them lands on the restored
   * state; afterwards, whatever `restore` did, the replays the venue's state says are playing
   * resume where that state shows they got to. So a replay that was playing at the save goes on
   * from the save's position (its next trade due at once), and one started since the save, or any
   * on a reset, is gone with everything else that happened since.
   */
  async aroundRestore<T>(restore: () => Promise<T>): Promise<T> {
    await this.stop();
    this.#players.clear();
    try {
      return await restore();
    } finally {
      this.resume();
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
    const boot = this.#boot;
    const { engine, log } = boot;
    const player = new ReplayPlayer(
      {
        engine,
        submit: (c) => boot.submit(c),
        now: () => boot.now(),
        ...(boot.wallDelay === undefined ? {} : { wallDelay: (ms: number) => boot.wallDelay?.(ms) ?? ms }),
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
        await boot.submit({ type: 'EndReplay', replayId: replay.replayId, reason: 'finished', played });
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

/**
 * At start-up: resumes the journal's replays and starts `--replay`'s, on a sandbox's replays
 * (the assembly's, src/api/assembly.ts; undefined on a venue that is not a sandbox).
 */
export async function runReplay(
  replays: Replays | undefined,
  args: readonly string[],
): Promise<Replays | undefined> {
  await replays?.run(args);
  return replays;
}
