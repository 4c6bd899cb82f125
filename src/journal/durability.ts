/**
 * @module durability — what every journal adapter reports the same way: the durable watermark's
 * listeners and waiters, and the one failure after which nothing more is acknowledged.
 */

/** A write, sync or acknowledgement failed: the journal accepts nothing more and acknowledges nothing more. */
export class JournalFailedError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'JournalFailedError';
  }
}

interface Waiter {
  readonly seq: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * The listeners and waiters of one journal. The journal calls `reached` when its watermark
 * advances and `failed` once when it stops; a listener that throws has its exception rethrown
 * asynchronously (uncaught) and does not keep the others from being told.
 */
export class DurabilityReports {
  readonly #durableListeners: ((durableSeq: number) => void)[] = [];
  readonly #errorListeners: ((error: Error) => void)[] = [];
  readonly #waiters: Waiter[] = [];

  /** Subscribes to the watermark; returns a function that unsubscribes. */
  onDurable(listener: (durableSeq: number) => void): () => void {
    return subscribe(this.#durableListeners, listener);
  }

  /** Subscribes to the failure; returns a function that unsubscribes. */
  onError(listener: (error: Error) => void): () => void {
    return subscribe(this.#errorListeners, listener);
  }

  /** Resolves once the watermark reaches `seq` (kept in seq order: waiters usually arrive so). */
  waitFor(seq: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiters = this.#waiters;
      let i = waiters.length;
      while (i > 0 && (waiters[i - 1] as Waiter).seq > seq) i--;
      waiters.splice(i, 0, { seq, resolve, reject });
    });
  }

  /** The watermark is now `durable`: resolves the waiters up to it, then tells the listeners. */
  reached(durable: number): void {
    const waiters = this.#waiters;
    let n = 0;
    while (n < waiters.length && (waiters[n] as Waiter).seq <= durable) n++;
    if (n > 0) for (const waiter of waiters.splice(0, n)) waiter.resolve();
    for (const listener of this.#durableListeners.slice()) {
      try {
        listener(durable);
      } catch (error) {
        rethrowLater(error);
      }
    }
  }

  /** Rejects every waiter (a closed journal: what was never appended will never be durable). */
  rejectWaiters(error: Error): void {
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
  }

  /**
   * The journal stopped: rejects every waiter and tells the error listeners, or, with none, throws
   * the failure asynchronously so that it is never silent.
   */
  failed(failure: JournalFailedError): void {
    this.rejectWaiters(failure);
    const listeners = this.#errorListeners.slice();
    if (listeners.length === 0) rethrowLater(failure);
    for (const listener of listeners) {
      try {
        listener(failure);
      } catch (error) {
        rethrowLater(error);
      }
    }
  }
}

function rethrowLater(error: unknown): void {
  process.nextTick(() => {
    throw error;
  });
}

/** Adds `listener` to `list`; returns a function that takes it out again. */
export function subscribe<T>(list: T[], listener: T): () => void {
  list.push(listener);
  return () => {
    const i = list.indexOf(listener);
    if (i >= 0) list.splice(i, 1);
  };
}
