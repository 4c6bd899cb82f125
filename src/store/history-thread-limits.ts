/**
 * @module history-thread-limits — the JavaScript heap bounds of the history threads (the
 * follower's engine replica, src/store/history-follower.ts, and the batch writer,
 * src/store/history-worker.ts).
 *
 * A thread's young generation is sized by V8 from the machine's memory: on the 23.5 GB benchmark
 * host it grows to 128 MiB of semi-spaces under a steady load, shrinks in a quiet spell and
 * grows again, and its pages stay resident in between. In bench:soak that was the history
 * thread's committed heap stepping 48 → 78 → 140 MiB, and the server's RSS with it, for
 * twenty minutes at 2,500 orders/s (bench/README.md, soak). Bounded to 48 MiB (16 MiB
 * semi-spaces, V8's size before it scaled them with memory) the thread's heap reaches its bound
 * within the warm-up. The old generation is not bounded: it holds the replica of the engine,
 * whose size grows with the venue's users and orders, and a thread over its bound dies and stops
 * the venue.
 */
import type { ResourceLimits } from 'node:worker_threads';

/** `resourceLimits` of every history thread. */
export const HISTORY_THREAD_LIMITS: ResourceLimits = Object.freeze({ maxYoungGenerationSizeMb: 48 });
