/** @module view — what every view of the console gets, and what it is. */
import type { AdminApi, Session } from './api.ts';

export interface Console {
  readonly api: AdminApi;
  /** Who is signed in (the views offer only what the role may do). */
  readonly who: Session;
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

/** Whether the signed-in role may do what `needed` may (the server checks too: src/api/admin/operators.ts). */
export function may(ctx: Console, needed: Session['role']): boolean {
  const rank = { viewer: 0, operator: 1, admin: 2 } as const;
  return rank[ctx.who.role] >= rank[needed];
}

/** Runs an action: its success said in green and `done` called, a refusal said in red. */
export async function act(
  ctx: Console,
  what: string,
  call: () => Promise<unknown>,
  success: string,
  done: () => void,
): Promise<void> {
  try {
    await call();
    ctx.notice(success, true);
  } catch (error) {
    ctx.notice(`${what}: ${error instanceof Error ? error.message : String(error)}`);
  }
  done();
}
