/**
 * @module start-refusal — the error for a start (or an offline tool) refused for a reason the
 * operator must fix: its message is one line that says what is wrong and what to do, printed as is,
 * without a stack.
 */

/** A refusal the operator fixes (a busy data directory, an edited genesis, a missing master key, …). */
export class StartRefusedError extends Error {
  override readonly name = 'StartRefusedError';
}
