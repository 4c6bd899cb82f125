/**
 * @module demo-client — how the demo's bots reach the venue: signed HTTP requests to the server's
 * own port, built exactly as any client builds them, under one request budget shared by every bot
 * so that together they stay far below the per-IP limit they share with the page on loopback.
 */
import { signedQuery } from '../api/auth/sign-request.ts';

/** The bots' User-Agent (browser-style, as the interface asks). */
export const DEMO_USER_AGENT = 'Mozilla/5.0 (compatible; bourse-demo)';
/** Longest wait for one reply (ms): a slow server makes a bot skip a beat, never pile up. */
const REQUEST_TIMEOUT_MS = 5_000;

/** A token bucket: `perSecond` requests a second, bursts up to one second's worth. */
export class RequestBudget {
  readonly #perSecond: number;
  #tokens: number;
  #at: number;

  constructor(perSecond: number) {
    this.#perSecond = perSecond;
    this.#tokens = perSecond;
    this.#at = performance.now();
  }

  /** Takes a token if one is left. */
  take(): boolean {
    const now = performance.now();
    this.#tokens = Math.min(this.#perSecond, this.#tokens + ((now - this.#at) * this.#perSecond) / 1_000);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** A reply body: an object (`{code, …}` or a bare record) or an array (order lists). */
export type Reply = Record<string, unknown> | unknown[];

export class DemoClient {
  readonly #base: string;
  readonly #accessKey: string;
  readonly #secret: string;
  readonly #budget: RequestBudget;

  constructor(base: string, accessKey: string, secret: string, budget: RequestBudget) {
    this.#base = base;
    this.#accessKey = accessKey;
    this.#secret = secret;
    this.#budget = budget;
  }

  /**
   * Calls a signed method; resolves with the reply's JSON, or undefined when the budget is spent,
   * the server cannot be reached or the reply is not JSON (a bot then simply skips a beat).
   */
  async call(method: string, params: readonly [string, string][] = []): Promise<Reply | undefined> {
    if (!this.#budget.take()) return undefined;
    const url = `${this.#base}/api/${method}?${signedQuery(method, params, this.#accessKey, this.#secret)}`;
    try {
      const response = await fetch(url, {
        headers: { 'user-agent': DEMO_USER_AGENT },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      return (await response.json()) as Reply;
    } catch {
      return undefined;
    }
  }
}

/** The `code` of a reply (undefined for bare records and arrays, which are successes). */
export function codeOf(reply: Reply | undefined): number | undefined {
  if (reply === undefined || Array.isArray(reply)) return undefined;
  const code = reply['code'];
  return typeof code === 'number' ? code : typeof code === 'string' ? Number(code) : undefined;
}
