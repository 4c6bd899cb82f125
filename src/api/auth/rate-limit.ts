/** @module rate-limit — the trade API's limits (per IP 10,000 requests/min with a one-hour lock; per API key 60 requests/s) behind a port, with a bounded in-memory adapter. */

/** Requests one IP may make to the trade API in any 60 one-second buckets. */
export const IP_REQUESTS_PER_MINUTE = 10_000;
/** How long an IP that went over its limit stays locked (ms). */
export const IP_LOCK_MS = 3_600_000;
/** Requests one API key may make in any 1000 ms. */
export const KEY_REQUESTS_PER_SECOND = 60;

/** The outcome of counting one request. */
export type RateDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** Earliest time (ms) a retry can succeed. */
      readonly retryAt: number;
      /** Says which limit and when to retry, for the 4002 reply. */
      readonly message: string;
    };

/** A limit in force now: an IP locked after its minute's limit, or a key at its per-second limit. */
export interface RateLimitLock {
  readonly kind: 'ip' | 'key';
  /** The IP address or the access key. */
  readonly subject: string;
  /** When requests are accepted again without a lift (ms). */
  readonly until: number;
}

/**
 * The rate-limit port. Each call counts one request (a refused request is not counted against
 * a later window). Adapters: in memory (this module, one gateway's own counts) and Redis
 * (redis-rate-limit.ts, counts shared by every gateway); both pass rate-limit.case.ts.
 */
export interface RateLimiter {
  /** One trade-API request from `ip`, counted before authentication. */
  hitIp(ip: string): RateDecision | Promise<RateDecision>;
  /** One authenticated request with `accessKey`, counted after its signature was verified. */
  hitKey(accessKey: string): RateDecision | Promise<RateDecision>;
}

/** The limits and their clock, the same for every adapter. */
export interface RateLimitSettings {
  /** Wall clock in ms (injectable for tests). Default `Date.now`. */
  readonly clock?: () => number;
  readonly ipRequestsPerMinute?: number;
  readonly ipLockMs?: number;
  readonly keyRequestsPerSecond?: number;
  /** Told when an IP gets locked (once a lock, not per refused request), e.g. to log it. */
  readonly onLock?: (ip: string, until: number, requestsPerMinute: number) => void;
}

export interface MemoryRateLimiterOptions extends RateLimitSettings {
  /** Most IPs counted at once; beyond it the least recently seen unlocked IP is forgotten. Default 200,000. */
  readonly maxTrackedIps?: number;
  /** Most keys counted at once; beyond it the least recently seen is forgotten. Default 100,000. */
  readonly maxTrackedKeys?: number;
  /** How often (clock ms) idle entries are swept. Default 10,000. */
  readonly sweepEveryMs?: number;
}

const SECONDS_PER_WINDOW = 60;

/** Per-IP request counts in one-second buckets of the last minute (a ring indexed by second). */
interface IpWindow {
  readonly counts: Uint16Array;
  total: number;
  /** The latest second counted (ms / 1000, floored). */
  second: number;
}

/** Times (ms) of a key's latest accepted requests, a ring of `limit` slots. */
interface KeyWindow {
  readonly times: Float64Array;
  head: number;
  lastSeen: number;
}

function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/** The refusal of a request from an IP locked until `until` (the same words from every adapter). */
export function ipLockedDecision(ip: string, until: number, now: number, perMinute: number): RateDecision {
  return {
    allowed: false,
    retryAt: until,
    message:
      `requests too frequent: IP ${ip} made more than ${perMinute} requests in a minute and is locked ` +
      `until ${new Date(until).toISOString()}; retry after ${seconds(until - now)} s`,
  };
}

/** The refusal of a request with a key that used its `perSecond` requests; it may retry at `retryAt`. */
export function keyRefusedDecision(retryAt: number, now: number, perSecond: number): RateDecision {
  return {
    allowed: false,
    retryAt,
    message:
      `requests too frequent: more than ${perSecond} requests per second with this API key; ` +
      `retry after ${retryAt - now} ms`,
  };
}

/**
 * In-memory limits for one gateway process.
 *
 * Per IP: the requests in the current second and the 59 before it are summed; the request that
 * would make it `ipRequestsPerMinute + 1` is refused and locks the IP for `ipLockMs`, after which
 * it is unlocked automatically with a fresh count. Per key: a request is refused when
 * `keyRequestsPerSecond` requests were already accepted in the 1000 ms before it (an exact
 * sliding window).
 *
 * Memory is bounded: entries idle for a whole window are swept, and the maps are capped (least
 * recently seen first out). Locks are kept until they expire: each needs 10,000 requests to earn.
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly #clock: () => number;
  readonly #ipLimit: number;
  readonly #ipLockMs: number;
  readonly #keyLimit: number;
  readonly #maxIps: number;
  readonly #maxKeys: number;
  readonly #sweepEveryMs: number;
  /** Insertion order is recency order: a hit deletes and re-inserts its entry. */
  readonly #ips = new Map<string, IpWindow>();
  readonly #locks = new Map<string, number>();
  readonly #onLock: MemoryRateLimiterOptions['onLock'];
  readonly #keys = new Map<string, KeyWindow>();
  #lastSweep: number;

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.#clock = options.clock ?? Date.now;
    this.#ipLimit = options.ipRequestsPerMinute ?? IP_REQUESTS_PER_MINUTE;
    this.#ipLockMs = options.ipLockMs ?? IP_LOCK_MS;
    this.#keyLimit = options.keyRequestsPerSecond ?? KEY_REQUESTS_PER_SECOND;
    this.#maxIps = options.maxTrackedIps ?? 200_000;
    this.#maxKeys = options.maxTrackedKeys ?? 100_000;
    this.#sweepEveryMs = options.sweepEveryMs ?? 10_000;
    this.#onLock = options.onLock;
    if (this.#ipLimit < 1 || this.#ipLimit > 65_535 || this.#keyLimit < 1) {
      throw new RangeError('rate limits must be positive (per-IP at most 65535 per minute)');
    }
    this.#lastSweep = this.#clock();
  }

  hitIp(ip: string): RateDecision {
    const now = this.#clock();
    this.#maybeSweep(now);
    const lockedUntil = this.#locks.get(ip);
    if (lockedUntil !== undefined) {
      if (now < lockedUntil) return this.#ipLocked(ip, lockedUntil, now);
      this.#locks.delete(ip);
    }
    const second = Math.floor(now / 1000);
    let w = this.#ips.get(ip);
    if (w === undefined) {
      w = { counts: new Uint16Array(SECONDS_PER_WINDOW), total: 0, second };
      if (this.#ips.size >= this.#maxIps) this.#evictOldest(this.#ips);
    } else {
      this.#ips.delete(ip);
      advance(w, second);
    }
    if (w.total >= this.#ipLimit) {
      // Over the limit: lock for the lock period; the count starts afresh when it ends.
      const until = now + this.#ipLockMs;
      this.#locks.set(ip, until);
      this.#onLock?.(ip, until, this.#ipLimit);
      return this.#ipLocked(ip, until, now);
    }
    const slot = w.second % SECONDS_PER_WINDOW;
    w.counts[slot] = (w.counts[slot] ?? 0) + 1;
    w.total += 1;
    this.#ips.set(ip, w);
    return { allowed: true };
  }

  hitKey(accessKey: string): RateDecision {
    const now = this.#clock();
    this.#maybeSweep(now);
    let w = this.#keys.get(accessKey);
    if (w === undefined) {
      w = { times: new Float64Array(this.#keyLimit).fill(-Infinity), head: 0, lastSeen: now };
      if (this.#keys.size >= this.#maxKeys) this.#evictOldest(this.#keys);
    } else {
      this.#keys.delete(accessKey);
    }
    w.lastSeen = now;
    this.#keys.set(accessKey, w);
    // The slot at head holds the time of the request `limit` accepted requests ago.
    const oldest = w.times[w.head] as number;
    if (oldest > now - 1000) return keyRefusedDecision(oldest + 1000, now, this.#keyLimit);
    w.times[w.head] = now;
    w.head = (w.head + 1) % this.#keyLimit;
    return { allowed: true };
  }

  /**
   * The limits in force at the clock's now: locked IPs (soonest to expire first), then keys that
   * made their whole per-second allowance in the last second.
   */
  locks(): RateLimitLock[] {
    const now = this.#clock();
    const out: RateLimitLock[] = [];
    for (const [ip, until] of this.#locks) if (until > now) out.push({ kind: 'ip', subject: ip, until });
    out.sort((a, b) => a.until - b.until);
    for (const [key, w] of this.#keys) {
      const oldest = w.times[w.head] as number;
      if (oldest > now - 1000) out.push({ kind: 'key', subject: key, until: oldest + 1000 });
    }
    return out;
  }

  /**
   * Lifts the limit on `subject`, an IP or an access key: an IP's lock and its count, or a key's
   * count, start afresh. Returns what was lifted (a lock in force), or undefined when nothing was.
   */
  lift(subject: string): RateLimitLock | undefined {
    const lifted = this.locks().find((l) => l.subject === subject);
    this.#locks.delete(subject);
    this.#ips.delete(subject);
    this.#keys.delete(subject);
    return lifted;
  }

  /** Nothing to release (the port's adapters share `close`). */
  async close(): Promise<void> {}

  /** Entries held (for tests and metrics). */
  get size(): { ips: number; locks: number; keys: number } {
    return { ips: this.#ips.size, locks: this.#locks.size, keys: this.#keys.size };
  }

  #ipLocked(ip: string, until: number, now: number): RateDecision {
    return ipLockedDecision(ip, until, now, this.#ipLimit);
  }

  #evictOldest<T>(map: Map<string, T>): void {
    const first = map.keys().next();
    if (first.done !== true) map.delete(first.value);
  }

  /** Drops idle entries (oldest first, so the scan stops at the first active one) and expired locks. */
  #maybeSweep(now: number): void {
    if (now - this.#lastSweep < this.#sweepEveryMs) return;
    this.#lastSweep = now;
    const second = Math.floor(now / 1000);
    for (const [ip, w] of this.#ips) {
      if (second - w.second < SECONDS_PER_WINDOW) break;
      this.#ips.delete(ip);
    }
    for (const [key, w] of this.#keys) {
      if (now - w.lastSeen <= 1000) break;
      this.#keys.delete(key);
    }
    for (const [ip, until] of this.#locks) if (until <= now) this.#locks.delete(ip);
  }
}

/** Moves an IP window to `second`, emptying the buckets of the seconds that left the minute. */
function advance(w: IpWindow, second: number): void {
  if (second <= w.second) return; // same second, or the clock stepped back: count in the latest bucket
  if (second - w.second >= SECONDS_PER_WINDOW) {
    w.counts.fill(0);
    w.total = 0;
  } else {
    for (let s = w.second + 1; s <= second; s++) {
      const slot = s % SECONDS_PER_WINDOW;
      w.total -= w.counts[slot] ?? 0;
      w.counts[slot] = 0;
    }
  }
  w.second = second;
}
