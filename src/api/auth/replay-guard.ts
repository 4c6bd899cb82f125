/**
 * @module replay-guard — the strict mode of API keys (docs/api-keys.md, "Replays"): a signed
 * request of such a key must sign a fresh `nonce` (its time in ms), and each signature is accepted
 * once while that nonce is fresh. Together the two refuse every replay: within the window the
 * signature is remembered, after it the nonce is stale, and the nonce cannot be changed without
 * breaking the signature.
 */

/** Signatures remembered per key at most; past it the key's requests are refused until some expire. */
export const MAX_REMEMBERED_PER_KEY = 10_000;
/** How often (ms of the callers' clock) keys idle for a whole window are forgotten. */
const SWEEP_EVERY_MS = 10_000;

/** What `admit` decided. */
export type ReplayVerdict = 'fresh' | 'replayed' | 'full';

/**
 * Remembers each strict key's signatures until their nonce goes stale. In memory, per process: a
 * deployment with several gateways needs a shared store behind the same contract (as the rate
 * limits do). Memory is bounded by the key's request rate times the window, and by
 * MAX_REMEMBERED_PER_KEY.
 */
export class ReplayGuard {
  /** accessKey → lowercase sign → the time (ms) from which it is forgotten. */
  readonly #seen = new Map<string, Map<string, number>>();
  readonly #maxPerKey: number;
  #sweptAt = 0;

  constructor(options: { readonly maxPerKey?: number } = {}) {
    this.#maxPerKey = options.maxPerKey ?? MAX_REMEMBERED_PER_KEY;
  }

  /**
   * Records `sign` (hex, either case) for `accessKey` until `forgetAt`: `fresh` the first time,
   * `replayed` while it is remembered, `full` when the key already holds MAX_REMEMBERED_PER_KEY
   * live signatures (nothing recorded then).
   */
  admit(accessKey: string, sign: string, forgetAt: number, now: number): ReplayVerdict {
    if (now - this.#sweptAt >= SWEEP_EVERY_MS) this.#sweep(now);
    let signs = this.#seen.get(accessKey);
    if (signs === undefined) {
      signs = new Map();
      this.#seen.set(accessKey, signs);
    }
    const key = sign.toLowerCase();
    const until = signs.get(key);
    if (until !== undefined && until > now) return 'replayed';
    if (signs.size >= this.#maxPerKey) {
      expire(signs, now);
      if (signs.size >= this.#maxPerKey) return 'full';
    }
    signs.set(key, forgetAt);
    return 'fresh';
  }

  /** Signatures remembered for `accessKey` (expired ones may linger until the next sweep). */
  remembered(accessKey: string): number {
    return this.#seen.get(accessKey)?.size ?? 0;
  }

  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [accessKey, signs] of this.#seen) {
      expire(signs, now);
      if (signs.size === 0) this.#seen.delete(accessKey);
    }
  }
}

function expire(signs: Map<string, number>, now: number): void {
  for (const [sign, until] of signs) if (until <= now) signs.delete(sign);
}
