/** @module refresh — reloading a view's content in place while it is shown. */
import { confirming } from './dom.ts';
import type { Console } from './view.ts';

/** How often a live view (the dashboard) reloads (ms). */
export const REFRESH_MS = 10_000;

/**
 * Calls `load()` every REFRESH_MS while the view is shown, skipping a round while the operator is
 * answering a confirmation in `root`. A failed round is left for the next one.
 */
export function keepFresh(
  ctx: Console,
  root: HTMLElement,
  current: () => boolean,
  load: () => Promise<void>,
): void {
  const timer = setInterval(() => {
    if (!current() || ctx.stopped) {
      clearInterval(timer);
      return;
    }
    if (!confirming(root)) load().catch(() => undefined);
  }, REFRESH_MS);
}
