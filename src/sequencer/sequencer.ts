/**
 * @module sequencer — the single writer: stamps each command with its sequence number and time,
 * appends it to the journal, and applies it to the engine once the journal reports it durable.
 *
 * Applying only durable commands makes every observable thing durable by construction: a reply,
 * a push, a history row or a read of live state never reflects a command that a crash could
 * lose. Group commit in the journal amortises the fsync over every command of a batch.
 */
import type { Command, SequencedCommand } from '../domain/commands.ts';
import type { ApplyResult, Engine } from '../engine/engine.ts';
import { encodeCommand } from './command-codec.ts';
import type { Clock, JournalPort, SnapshotPort } from './ports.ts';
import type { Log } from '../domain/log.ts';
import { FeedPositionError, type AppliedFeed, type SubmitPort } from './venue-ports.ts';

/** Commands appended but not yet applied, beyond which new commands are refused as BUSY. */
export const DEFAULT_MAX_IN_FLIGHT_COMMANDS = 100_000;

export interface SequencerOptions {
  readonly clock: Clock;
  readonly maxInFlight: number;
  /** Take a snapshot after this many applied commands (0: never by count). */
  readonly snapshotEveryCommands: number;
  /** Take a snapshot after this much time with commands applied (0: never by time). */
  readonly snapshotEveryMs: number;
  /** How many snapshots retention keeps (at least 2). */
  readonly keepSnapshots: number;
  /** Whether retention also deletes journal segments older than the oldest kept snapshot. */
  readonly pruneJournal: boolean;
  /** Diagnostics: busy spells, subscriber faults, a stop nobody listens for. */
  readonly log: Log;
  /** Snapshot and retention events (default `log`). */
  readonly snapshotLog?: Log;
  /**
   * Schedule FireTimers at the engine's deadlines on real-time timers (default true). False
   * under a manual clock, where timers fire when the operator advances time (manual-clock.ts).
   */
  readonly armTimers?: boolean;
  /**
   * The wall time (ms) a timer waits for `venueMs` of venue time (default: the same): under a
   * speed clock (speed-clock.ts) venue time runs faster, so its timers wait less.
   */
  readonly timerDelay?: (venueMs: number) => number;
  /** No command is stamped earlier than this: the journal's last time, so time never runs back across a restart. */
  readonly startTime?: number | undefined;
  /**
   * Reuse the engine's hot events (issue 34, src/engine/event-pool.ts; default false): the events
   * of a batch are filled in again once the event loop turn that applied it is over (and with it
   * every subscriber and every `await submit()` continuation it resumed). Only where every
   * subscriber and every reader of a result's events copies what it keeps past that turn.
   */
  readonly reuseEvents?: boolean;
}

/** One applied command, as subscribers receive it. */
export interface AppliedCommand {
  readonly command: SequencedCommand;
  readonly result: ApplyResult;
  /** The command as the journal holds it (see command-codec.ts): what a replica applies. */
  readonly payload: Uint8Array;
  /** When `submit` took it (performance.now(), ms); absent for commands replayed at start-up. */
  readonly submittedAt?: number;
  /**
   * The request id journaled with it (a gateway's command, src/cluster/command-link.ts), on
   * commands read back from a journal that keeps ids (replicas, recovery); absent otherwise.
   */
  readonly requestId?: string;
}

export type AppliedListener = (batch: readonly AppliedCommand[]) => void;

interface InFlight {
  readonly command: SequencedCommand;
  readonly payload: Uint8Array;
  readonly submittedAt: number;
  readonly resolve: (result: ApplyResult) => void;
  readonly reject: (error: Error) => void;
}

/**
 * A command refused or abandoned because the sequencer stopped (`cause`: the journal failure or
 * broken invariant that stopped it) or was closed. The stop itself is reported once, through
 * `onFatal`; a request that meets this error need not report it again.
 */
export class SequencerStoppedError extends Error {
  constructor(message: string, cause?: Error) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'SequencerStoppedError';
  }
}

const BUSY: ApplyResult = { result: 'BUSY', message: 'too many commands in flight', events: [] };

export class Sequencer implements SubmitPort, AppliedFeed {
  readonly #engine: Engine;
  readonly #journal: JournalPort;
  readonly #snapshots: SnapshotPort | undefined;
  readonly #options: SequencerOptions;
  readonly #inFlight: (InFlight | undefined)[] = [];
  #head = 0;
  readonly #listeners: AppliedListener[] = [];
  readonly #fatalListeners: ((error: Error) => void)[] = [];
  readonly #pressure: (() => boolean)[] = [];
  #lastSeq: number;
  #lastTime = 0;
  #failed: Error | undefined;
  /** What submits get once the sequencer has failed. */
  #stopped: SequencerStoppedError | undefined;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;
  #sinceSnapshot = 0;
  #snapshotTimer: NodeJS.Timeout | undefined;
  #snapshotting: Promise<string | undefined> | undefined;
  #closed = false;
  readonly #snapshotLog: Log;
  /** Commands refused as BUSY, by command type (for metrics). */
  readonly #busy = new Map<string, number>();
  /** Refusals since the current busy spell began (undefined: not busy). */
  #busySpell: { since: number; refused: number } | undefined;
  #lastSnapshot: { seq: number; at: number } | undefined;
  /** A recycle of the engine's events is scheduled for the end of this event loop turn. */
  #recycling = false;

  constructor(
    engine: Engine,
    journal: JournalPort,
    snapshots: SnapshotPort | undefined,
    options: SequencerOptions,
  ) {
    this.#engine = engine;
    this.#journal = journal;
    this.#snapshots = snapshots;
    this.#options = options;
    this.#snapshotLog = options.snapshotLog ?? options.log;
    this.#lastSeq = engine.lastSeq;
    this.#lastTime = options.startTime ?? 0;
    if (journal.durableSeq !== engine.lastSeq) {
      throw new Error(
        `engine at ${engine.lastSeq} but journal durable at ${journal.durableSeq}: recover first`,
      );
    }
    if (options.reuseEvents === true) engine.eventPool.enable();
    journal.onDurable((durableSeq) => this.#applyDurable(durableSeq));
    journal.onError((error) => this.#fail(error));
    if (options.snapshotEveryMs > 0) {
      this.#snapshotTimer = setInterval(() => {
        if (this.#sinceSnapshot > 0) void this.snapshot();
      }, options.snapshotEveryMs);
      this.#snapshotTimer.unref();
    }
    this.#armTimer();
  }

  /** The engine, for reads of live state. Everything in it is durable. */
  get engine(): Engine {
    return this.#engine;
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Commands accepted but not yet durable and applied. */
  get inFlight(): number {
    return this.#inFlight.length - this.#head;
  }

  /** Commands refused as BUSY since start, by command type. */
  get busyRefusals(): ReadonlyMap<string, number> {
    return this.#busy;
  }

  /** The latest snapshot this sequencer wrote: its seq and wall-clock time (ms). */
  get lastSnapshot(): { readonly seq: number; readonly at: number } | undefined {
    return this.#lastSnapshot;
  }

  /** The failure that stopped the sequencer, or undefined while it runs. */
  get failure(): Error | undefined {
    return this.#failed;
  }

  /** The last command applied to the engine (commands after it may be in flight). */
  get appliedSeq(): number {
    return this.#engine.lastSeq;
  }

  /**
   * Subscribers receive each applied batch in sequence order; a failing one is logged, never
   * fatal. The sequencer keeps no past: `fromSeq` must be the next command to be applied.
   */
  subscribe(fromSeq: number, listener: AppliedListener): void {
    const next = this.#engine.lastSeq + 1;
    if (fromSeq !== next) {
      throw new FeedPositionError(
        fromSeq,
        `the sequencer delivers from the next command to apply, seq ${next}`,
      );
    }
    this.#listeners.push(listener);
  }

  /** Called once when the sequencer stops for good (journal failure or broken engine invariant). */
  onFatal(listener: (error: Error) => void): void {
    this.#fatalListeners.push(listener);
  }

  /** A downstream queue (history store, pushes) that reports true while it is over its bound. */
  addPressureSource(overBound: () => boolean): void {
    this.#pressure.push(overBound);
  }

  /**
   * Sequences a command. Resolves with the engine's result once the command is durable and
   * applied; resolves BUSY at once (nothing journaled) when the pipeline is over its bounds;
   * rejects with a SequencerStoppedError if the sequencer has stopped or is closed. `requestId`
   * is journaled with the command (JournalPort.append's tag).
   */
  submit(command: Command, requestId?: string): Promise<ApplyResult> {
    if (this.#stopped !== undefined) return Promise.reject(this.#stopped);
    if (this.#closed) return Promise.reject(new SequencerStoppedError('sequencer closed'));
    if (this.inFlight >= this.#options.maxInFlight || this.#pressure.some((over) => over())) {
      return Promise.resolve(this.#refuseBusy(command));
    }
    if (this.#busySpell !== undefined) this.#endBusySpell();
    const now = this.#options.clock();
    this.#lastTime = now > this.#lastTime ? now : this.#lastTime;
    const sequenced = { ...command, seq: this.#lastSeq + 1, time: this.#lastTime } as SequencedCommand;
    const payload = encodeCommand(sequenced);
    this.#journal.append(sequenced.seq, payload, requestId);
    this.#lastSeq = sequenced.seq;
    const submittedAt = performance.now();
    return new Promise<ApplyResult>((resolve, reject) => {
      this.#inFlight.push({ command: sequenced, payload, submittedAt, resolve, reject });
    });
  }

  /** Counts a BUSY refusal; the first of a spell is logged (once, not per command). */
  #refuseBusy(command: Command): ApplyResult {
    this.#busy.set(command.type, (this.#busy.get(command.type) ?? 0) + 1);
    if (this.#busySpell === undefined) {
      this.#busySpell = { since: performance.now(), refused: 0 };
      const over = this.inFlight >= this.#options.maxInFlight;
      this.#options.log.warn(
        { inFlight: this.inFlight, maxInFlight: this.#options.maxInFlight },
        over
          ? 'busy: commands in flight reached their bound; new commands are refused (BUSY) until the journal catches up'
          : 'busy: a downstream queue (history store) is over its bound; new commands are refused (BUSY) until it drains',
      );
    }
    this.#busySpell.refused++;
    return BUSY;
  }

  #endBusySpell(): void {
    const spell = this.#busySpell as { since: number; refused: number };
    this.#busySpell = undefined;
    this.#options.log.warn(
      { refused: spell.refused, ms: Math.round(performance.now() - spell.since) },
      `busy spell over: ${spell.refused} commands were refused as BUSY`,
    );
  }

  #applyDurable(durableSeq: number): void {
    if (this.#failed !== undefined) return;
    const batch: AppliedCommand[] = [];
    const resolved: [InFlight, ApplyResult][] = [];
    while (this.#head < this.#inFlight.length) {
      const entry = this.#inFlight[this.#head] as InFlight;
      if (entry.command.seq > durableSeq) break;
      // Released at once, not at the next compaction: an applied entry holds its payload and,
      // through its settled promise, its result's events (up to 4,096 of them, 25 MiB of the
      // heap at 2,500 orders/s, bench:soak).
      this.#inFlight[this.#head++] = undefined;
      let result: ApplyResult;
      try {
        result = this.#engine.apply(entry.command);
      } catch (error) {
        entry.reject(error as Error);
        this.#fail(
          new Error(`engine invariant broken at seq ${entry.command.seq}: ${(error as Error).message}`),
        );
        return;
      }
      batch.push({ command: entry.command, result, payload: entry.payload, submittedAt: entry.submittedAt });
      resolved.push([entry, result]);
    }
    if (this.#head > 4096 && this.#head * 2 > this.#inFlight.length) {
      this.#inFlight.splice(0, this.#head);
      this.#head = 0;
    }
    if (batch.length === 0) return;
    for (const listener of this.#listeners) {
      try {
        listener(batch);
      } catch (error) {
        this.#options.log.error(
          { err: error, fromSeq: batch[0]?.command.seq, toSeq: durableSeq },
          'an applied-batch subscriber failed (the engine state is unaffected)',
        );
      }
    }
    for (const [entry, result] of resolved) entry.resolve(result);
    this.#recycleEvents();
    this.#sinceSnapshot += batch.length;
    if (
      this.#options.snapshotEveryCommands > 0 &&
      this.#sinceSnapshot >= this.#options.snapshotEveryCommands
    ) {
      void this.snapshot();
    }
    this.#armTimer();
  }

  /**
   * With `reuseEvents`: the events handed out so far are reused after this turn of the event loop,
   * once the microtasks the batch's resolutions queued have run (setImmediate comes after them).
   */
  #recycleEvents(): void {
    if (this.#recycling || this.#options.reuseEvents !== true) return;
    this.#recycling = true;
    setImmediate(() => {
      this.#recycling = false;
      this.#engine.eventPool.recycle();
    }).unref();
  }

  /** Arms the timer afresh for the engine's earliest deadline (a speed clock's speed changed). */
  rearmTimers(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
    this.#armTimer();
  }

  /** Schedules a FireTimers command at the engine's earliest deadline. */
  #armTimer(): void {
    if (this.#options.armTimers === false) return;
    const next = this.#engine.nextDeadline();
    if (next === undefined || next >= this.#timerAt || this.#closed) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = next;
    const venueDelay = Math.max(0, next - this.#options.clock());
    const delay = this.#options.timerDelay?.(venueDelay) ?? venueDelay;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.submit({ type: 'FireTimers' }).then(
        (r) => {
          // BUSY: try again shortly; the deadline has passed and stays due.
          if (r.result === 'BUSY') setTimeout(() => this.#armTimer(), 10).unref();
        },
        () => undefined,
      );
    }, delay);
    this.#timer.unref();
  }

  /**
   * Writes a snapshot of the engine as it is now (every applied command is durable), then
   * applies retention. Resolves with the snapshot's path, or undefined without a store.
   */
  snapshot(): Promise<string | undefined> {
    const store = this.#snapshots;
    if (store === undefined) return Promise.resolve(undefined);
    if (this.#snapshotting !== undefined) return this.#snapshotting;
    const state = this.#engine.snapshot();
    const lastSeq = state.lastSeq;
    const stateHash = this.#engine.stateHash(state);
    this.#sinceSnapshot = 0;
    this.#snapshotting = store
      .write(state, { lastSeq, stateHash })
      .then((path) => {
        this.#lastSnapshot = { seq: lastSeq, at: this.#options.clock() };
        this.#snapshotLog.info({ seq: lastSeq, path }, `snapshot at seq ${lastSeq} written`);
        this.#retain(store);
        return path;
      })
      .catch((error: Error) => {
        this.#snapshotLog.error({ seq: lastSeq, err: error }, `snapshot at seq ${lastSeq} failed`);
        return undefined;
      })
      .finally(() => (this.#snapshotting = undefined));
    return this.#snapshotting;
  }

  #retain(store: SnapshotPort): void {
    const removed = store.prune(Math.max(2, this.#options.keepSnapshots));
    for (const path of removed) this.#snapshotLog.info({ path }, 'retention removed a snapshot');
    if (!this.#options.pruneJournal) return;
    const kept = store.list();
    const oldest = kept[kept.length - 1];
    if (kept.length >= 2 && oldest !== undefined) {
      for (const path of this.#journal.removeSegmentsBefore(oldest.lastSeq + 1)) {
        this.#snapshotLog.info({ path }, 'retention removed a journal segment');
      }
    }
  }

  #fail(error: Error): void {
    if (this.#failed !== undefined) return;
    this.#failed = error;
    this.#stopped = new SequencerStoppedError(`the venue stopped: ${error.message}`, error);
    // The composition root logs the stop once; said here only when nobody listens.
    if (this.#fatalListeners.length === 0) this.#options.log.error({ err: error }, 'sequencer stopped');
    for (let i = this.#head; i < this.#inFlight.length; i++)
      (this.#inFlight[i] as InFlight).reject(this.#stopped);
    this.#inFlight.length = 0;
    this.#head = 0;
    for (const listener of this.#fatalListeners) listener(error);
  }

  /** Stops timers, waits for in-flight commands to become durable and applied, closes the journal. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#snapshotTimer !== undefined) clearInterval(this.#snapshotTimer);
    await this.#journal.close();
    await this.#snapshotting;
  }
}
