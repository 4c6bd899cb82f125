/**
 * @module heap-growth — how far V8 lets the JavaScript heaps grow past their live data before a
 * full collection, for the whole server process (every isolate: the main thread and the history
 * threads; the flag is process-wide).
 *
 * V8 picks the old generation's next limit as the live size times a factor it chooses from its
 * GC and allocation speeds, up to 4. Under a steady order load the main thread's live data was
 * 40–70 MiB and its heap grew to 280–315 MiB before each full collection (bench:soak, 2,500
 * orders/s); the pages of those peaks stayed resident, so the server's RSS rose with each new
 * peak for twenty minutes and swung by a hundred MiB. With the factor fixed at
 * `1 + HEAP_GROWING_PERCENT / 100` the peak follows the live data, so the RSS settles within the
 * warm-up; the price is a full collection every few tens of MiB promoted instead of every few
 * hundred, each marking the same live data (a few ms of the main thread, the rest concurrent).
 */
import { setFlagsFromString } from 'node:v8';

/** The heap grows at most this many percent past its live data before a full collection. */
export const HEAP_GROWING_PERCENT = 50;

/** Fixes V8's heap growing factor (idempotent; V8 reads it at every full collection). */
export function boundHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
