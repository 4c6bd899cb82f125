/**
 * @module health — liveness and readiness (docs/operations.md, "Health and readiness").
 *
 * Alive: the process answers and has not failed. Ready: it has recovered (snapshot + journal
 * replayed, history brought up to date) and opened its API, the journal accepts writes (no write
 * or fdatasync has failed, the sequencer has not stopped), and the history store is at most
 * `maxHistoryLag` commands behind the engine (its follower running).
 */

export type Phase = 'starting' | 'recovering' | 'running' | 'stopping' | 'failed';

/** What readiness reads once the venue runs (structural: main.ts passes the real parts). */
export interface ReadinessSources {
  readonly engine: { readonly lastSeq: number };
  readonly journal: { readonly durableSeq: number; readonly failure: Error | null };
  readonly sequencer: { readonly failure: Error | undefined };
  readonly history: { readonly writtenSeq: number; readonly failure: Error | undefined };
}

export interface Check {
  readonly ok: boolean;
  readonly [detail: string]: unknown;
}

export interface ReadyReport {
  readonly ready: boolean;
  readonly phase: Phase;
  readonly checks: {
    readonly recovered: Check;
    readonly journal: Check;
    readonly history: Check;
  };
}

export class Health {
  readonly #started: number;
  readonly #maxHistoryLag: number;
  readonly #now: () => number;
  #phase: Phase = 'starting';
  #sources: ReadinessSources | undefined;
  #replay: { replayed: number; total: number } | undefined;
  #reason: string | undefined;

  constructor(options: { maxHistoryLag: number; now?: () => number }) {
    this.#maxHistoryLag = options.maxHistoryLag;
    this.#now = options.now ?? Date.now;
    this.#started = this.#now();
  }

  get phase(): Phase {
    return this.#phase;
  }

  /** Recovery has begun. */
  recovering(): void {
    this.#phase = 'recovering';
  }

  /** How far the start-up replay is (a recovery `progress` callback). */
  readonly replayProgress = (replayed: number, total: number): void => {
    this.#replay = { replayed, total };
  };

  /** Recovered and serving: readiness now reads `sources`. */
  running(sources: ReadinessSources): void {
    this.#sources = sources;
    this.#phase = 'running';
  }

  /** A clean stop has begun (not ready from now on). */
  stopping(): void {
    if (this.#phase !== 'failed') this.#phase = 'stopping';
  }

  /** The venue stopped for good (not alive either). */
  failed(reason: string): void {
    this.#phase = 'failed';
    this.#reason = reason;
  }

  /** Liveness: everything but a failed venue is alive. */
  alive(): { status: 'alive' | 'failed'; phase: Phase; uptimeSeconds: number; reason?: string } {
    return {
      status: this.#phase === 'failed' ? 'failed' : 'alive',
      phase: this.#phase,
      uptimeSeconds: Math.round((this.#now() - this.#started) / 1000),
      ...(this.#reason === undefined ? {} : { reason: this.#reason }),
    };
  }

  /** Readiness, with each check's figures. */
  ready(): ReadyReport {
    const phase = this.#phase;
    const s = this.#sources;
    const recovered: Check =
      phase === 'running'
        ? { ok: true }
        : {
            ok: false,
            ...(phase === 'recovering' && this.#replay !== undefined ? { replay: this.#replay } : {}),
          };
    if (s === undefined) {
      return {
        ready: false,
        phase,
        checks: { recovered, journal: { ok: false }, history: { ok: false } },
      };
    }
    const journalError = s.journal.failure ?? s.sequencer.failure;
    const journal: Check =
      journalError === undefined || journalError === null
        ? { ok: true, durableSeq: s.journal.durableSeq }
        : { ok: false, durableSeq: s.journal.durableSeq, error: journalError.message };
    const lag = Math.max(0, s.engine.lastSeq - s.history.writtenSeq);
    const history: Check =
      s.history.failure !== undefined
        ? { ok: false, lag, maxLag: this.#maxHistoryLag, error: s.history.failure.message }
        : { ok: lag <= this.#maxHistoryLag, lag, maxLag: this.#maxHistoryLag };
    return {
      ready: phase === 'running' && journal.ok && history.ok,
      phase,
      checks: { recovered, journal, history },
    };
  }

  /** True while `ready()` says so (for the `bourse_ready` metric). */
  readonly isReady = (): boolean => this.ready().ready;
}
