/**
 * @module replay-record — the engine's record of a sandbox's replays (docs/sandbox.md, "Replay"):
 * each replay's inputs (its files' names, SHA-256 hashes, formats and markets, and the history's
 * first time), whether it ended and how far it got. The replayed flow itself is ordinary orders;
 * this record is what lets a restarted venue resume a replay from the journal alone, and refuse
 * to resume from a file that changed. Pure and synchronous; held by the demo state (demo-state.ts),
 * the sandbox's record in the engine.
 */
import type { EndReplay, ReplaySource, StartReplay } from '../domain/commands.ts';
import type { EngineEvent } from '../domain/events.ts';
import type { ApplyResult } from './results.ts';

/** At most this many files in one replay. */
export const MAX_REPLAY_SOURCES = 32;

/** One replay as the engine records it. */
export interface ReplayView {
  /** The StartReplay command's sequence number. */
  readonly replayId: number;
  readonly sources: readonly ReplaySource[];
  readonly historyStart: number;
  /** The venue time it started at (the StartReplay command's time). */
  readonly startedAt: number;
  /** undefined while it plays. */
  readonly ended?: { readonly reason: 'finished' | 'stopped'; readonly played: number; readonly at: number };
}

/** The plain-data form (part of the demo object of the engine snapshot once a replay started). */
export type ReplaySnapshot = ReplayView;

const SHA256 = /^[0-9a-f]{64}$/;

const refused = (message: string, result: 'INVALID_PARAMETER' | 'INVALID_STATE' | 'UNKNOWN_MARKET') =>
  ({ result, message, events: [] }) as ApplyResult;

export class ReplayRecord {
  readonly #hasMarket: (name: string) => boolean;
  readonly #replays = new Map<number, ReplayView>();

  constructor(hasMarket: (name: string) => boolean) {
    this.#hasMarket = hasMarket;
  }

  get isEmpty(): boolean {
    return this.#replays.size === 0;
  }

  /** Every replay, oldest first. */
  replays(): ReplayView[] {
    return [...this.#replays.values()];
  }

  /** The replays that have not ended, oldest first. */
  playing(): ReplayView[] {
    return this.replays().filter((r) => r.ended === undefined);
  }

  /**
   * StartReplay: 1 to MAX_REPLAY_SOURCES sources, each a file name, a SHA-256 in hex, a format, a
   * known market and a whole number of trades (INVALID_PARAMETER, UNKNOWN_MARKET); refused
   * (INVALID_STATE) while another replay plays one of its markets. Event: ReplayStarted.
   */
  start(cmd: StartReplay, seq: number, time: number, events: EngineEvent[]): ApplyResult {
    const sources = cmd.sources;
    if (!Array.isArray(sources) || sources.length === 0 || sources.length > MAX_REPLAY_SOURCES)
      return refused(`a replay has 1 to ${MAX_REPLAY_SOURCES} files`, 'INVALID_PARAMETER');
    if (!Number.isSafeInteger(cmd.historyStart) || cmd.historyStart < 0)
      return refused('historyStart must be a time in ms', 'INVALID_PARAMETER');
    for (const s of sources) {
      if (typeof s.file !== 'string' || s.file === '' || s.file.length > 4096)
        return refused('a replay file needs a name', 'INVALID_PARAMETER');
      if (typeof s.sha256 !== 'string' || !SHA256.test(s.sha256))
        return refused(`${s.file}: sha256 must be 64 hex digits`, 'INVALID_PARAMETER');
      if (typeof s.format !== 'string' || s.format === '')
        return refused(`${s.file}: no format`, 'INVALID_PARAMETER');
      if (typeof s.market !== 'string' || !this.#hasMarket(s.market))
        return refused(`${s.file}: unknown market '${String(s.market)}'`, 'UNKNOWN_MARKET');
      if (!Number.isSafeInteger(s.trades) || s.trades < 0)
        return refused(`${s.file}: trades must be a whole number`, 'INVALID_PARAMETER');
    }
    const busy = new Set(this.playing().flatMap((r) => r.sources.map((s) => s.market)));
    const clash = sources.find((s) => busy.has(s.market));
    if (clash !== undefined)
      return refused(`a replay plays ${clash.market} already (end it first)`, 'INVALID_STATE');
    const replay: ReplayView = {
      replayId: seq,
      sources: sources.map((s) => ({ ...s })),
      historyStart: cmd.historyStart,
      startedAt: time,
    };
    this.#replays.set(seq, replay);
    events.push({
      type: 'ReplayStarted',
      replayId: seq,
      sources: replay.sources,
      historyStart: cmd.historyStart,
      time,
    });
    return { result: 'OK', events };
  }

  /** EndReplay: an unknown replay is INVALID_PARAMETER; an ended one is OK with `duplicate`. Event: ReplayEnded. */
  end(cmd: EndReplay, time: number, events: EngineEvent[]): ApplyResult {
    const replay = this.#replays.get(cmd.replayId);
    if (replay === undefined) return refused(`no replay ${String(cmd.replayId)}`, 'INVALID_PARAMETER');
    if (cmd.reason !== 'finished' && cmd.reason !== 'stopped')
      return refused('reason is finished or stopped', 'INVALID_PARAMETER');
    if (!Number.isSafeInteger(cmd.played) || cmd.played < 0)
      return refused('played must be a whole number', 'INVALID_PARAMETER');
    if (replay.ended !== undefined) return { result: 'OK', events: [], duplicate: true };
    this.#replays.set(cmd.replayId, {
      ...replay,
      ended: { reason: cmd.reason, played: cmd.played, at: time },
    });
    events.push({
      type: 'ReplayEnded',
      replayId: cmd.replayId,
      reason: cmd.reason,
      played: cmd.played,
      time,
    });
    return { result: 'OK', events };
  }

  snapshot(): ReplaySnapshot[] {
    return this.replays().map((r) => structuredClone(r));
  }

  load(replays: readonly ReplaySnapshot[]): void {
    for (const r of replays) this.#replays.set(r.replayId, structuredClone(r));
  }
}
