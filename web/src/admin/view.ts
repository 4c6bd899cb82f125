/** @module view — what every view of the console gets, and what it is. */
import type { AdminApi } from './api.ts';

export interface Console {
  readonly api: AdminApi;
  /** Set once signed out: views stop refreshing. */
  stopped: boolean;
  /** Shows a message above the view (red, or green when `good`). */
  notice(message: string, good?: boolean): void;
  /** Goes to another view (`users`, `user/7`, …). */
  go(hash: string): void;
}

/**
 * A view: builds its content from the admin API. `arg` is what follows the view's name in the
 * hash (`#user/7` → `7`); `current()` says whether it is still the view shown (a refresh stops
 * when it is not).
 */
export type View = (ctx: Console, arg: string | undefined, current: () => boolean) => Promise<HTMLElement>;
