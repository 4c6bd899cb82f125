/**
 * @module redis-rate-limit — the trade API's limits counted in Redis, shared by every gateway
 * (the scale-out adapter of RateLimiter; the same semantics as MemoryRateLimiter, checked by
 * rate-limit.case.ts).
 *
 * Each hit is one Lua script, so a count and its check are atomic across gateways:
 * - per IP, a hash of one-second buckets (`<prefix>ip:{<ip>}:win`, field = the second) summed
 *   over the current second and the 59 before it, and a lock (`<prefix>ip:{<ip>}:lock`, value =
 *   until when, in ms). The request that would make the sum `ipRequestsPerMinute + 1` sets the
 *   lock and drops the buckets (the count starts afresh when the lock lifts); a request at or
 *   after the lock's time lifts it. The braces are a Redis Cluster hash tag: one IP's two keys
 *   live in one slot, as a script needs;
 * - per key, a list of the times of the last `keyRequestsPerSecond` accepted requests
 *   (`<prefix>key:<accessKey>`, newest first): a request is refused while the oldest of them is
 *   less than 1000 ms old.
 * Times are the gateway's clock (ms), passed to the script: gateways are expected on NTP, and a
 * skew of a few ms moves a window's edge by as much. Keys expire by themselves (TTL a little
 * longer than what they count), so Redis holds only active IPs, keys and locks.
 *
 * **The request path never waits on Redis for longer than `timeoutMs`** (50 ms by default; a hit
 * takes ~0.1 ms on a healthy local Redis, and a few ms on a loaded machine). When Redis errs, times out or is disconnected, the
 * decision is made by a MemoryRateLimiter in this gateway with the same limits, and for
 * `retryAfterMs` (1 s) every request goes there at once without trying Redis; then the next hit
 * tries Redis again. The limits degrade to per-gateway ones instead of failing open or closed
 * (docs/scale-out.md, "Rate limits in Redis", says why for a venue).
 */
import { createHash } from 'node:crypto';
import { createClient } from '@redis/client';
import {
  IP_LOCK_MS,
  IP_REQUESTS_PER_MINUTE,
  KEY_REQUESTS_PER_SECOND,
  MemoryRateLimiter,
  ipLockedDecision,
  keyRefusedDecision,
  type RateDecision,
  type RateLimitLock,
  type RateLimitSettings,
  type RateLimiter,
} from './rate-limit.ts';

/** Longest wait for Redis on the request path (ms) before this gateway decides on its own. */
export const REDIS_LIMITS_TIMEOUT_MS = 50;
/** How long after a Redis failure the gateway's own counts decide before Redis is tried again (ms). */
export const REDIS_LIMITS_RETRY_AFTER_MS = 1_000;
/** Longest wait for the first connection at start (ms). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * KEYS[1] the lock, KEYS[2] the buckets; ARGV now (ms), limit, lock (ms).
 * Returns {1} allowed, {0, until, 0} locked already, {0, until, 1} locked by this request.
 */
const IP_SCRIPT = `
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local lockMs = tonumber(ARGV[3])
local locked = redis.call('GET', KEYS[1])
if locked then
  local untilMs = tonumber(locked)
  if now < untilMs then return {0, untilMs, 0} end
  redis.call('DEL', KEYS[1])
end
local second = math.floor(now / 1000)
local oldest = second - 59
local buckets = redis.call('HGETALL', KEYS[2])
local total = 0
for i = 1, #buckets, 2 do
  if tonumber(buckets[i]) < oldest then
    redis.call('HDEL', KEYS[2], buckets[i])
  else
    total = total + tonumber(buckets[i + 1])
  end
end
if total >= limit then
  local untilMs = now + lockMs
  redis.call('SET', KEYS[1], string.format('%d', untilMs), 'PX', lockMs + 60000)
  redis.call('DEL', KEYS[2])
  return {0, untilMs, 1}
end
redis.call('HINCRBY', KEYS[2], string.format('%d', second), 1)
redis.call('PEXPIRE', KEYS[2], 61000)
return {1}
`;

/**
 * KEYS[1] the times of the last accepted requests; ARGV now (ms), limit.
 * Returns {1} allowed, {0, retryAt} refused.
 */
const KEY_SCRIPT = `
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local oldest = redis.call('LINDEX', KEYS[1], limit - 1)
if oldest and tonumber(oldest) > now - 1000 then return {0, tonumber(oldest) + 1000} end
redis.call('LPUSH', KEYS[1], string.format('%d', now))
redis.call('LTRIM', KEYS[1], 0, limit - 1)
redis.call('PEXPIRE', KEYS[1], 10000)
return {1}
`;

/**
 * KEYS[1] an IP's lock, KEYS[2] its buckets, KEYS[3] a key's times; ARGV now (ms), key limit.
 * Returns {ip lock's end or -1, key limit's end or -1} as they were, then deletes all three.
 */
const LIFT_SCRIPT = `
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local ipUntil = -1
local locked = redis.call('GET', KEYS[1])
if locked and tonumber(locked) > now then ipUntil = tonumber(locked) end
local keyUntil = -1
local oldest = redis.call('LINDEX', KEYS[3], limit - 1)
if oldest and tonumber(oldest) > now - 1000 then keyUntil = tonumber(oldest) + 1000 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return {ipUntil, keyUntil}
`;

export interface RedisRateLimiterOptions extends RateLimitSettings {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://` for TLS). */
  readonly url: string;
  /** Prefix of every key (several venues may share one Redis). Default `bourse:limits:`. */
  readonly prefix?: string;
  /** Longest wait for Redis per hit (ms). Default REDIS_LIMITS_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** How long the gateway decides alone after a failure (ms). Default REDIS_LIMITS_RETRY_AFTER_MS. */
  readonly retryAfterMs?: number;
  /** Told when the limits move to this gateway's memory (why) and back to Redis (undefined). */
  readonly onDegraded?: (problem: string | undefined) => void;
}

type Client = ReturnType<typeof createClient>;

/** A script and its SHA1, run with EVALSHA (EVAL once when the server does not know it yet). */
interface Script {
  readonly source: string;
  readonly sha: string;
}

const script = (source: string): Script => ({
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});
const IP = script(IP_SCRIPT);
const KEY = script(KEY_SCRIPT);
const LIFT = script(LIFT_SCRIPT);

/** Limits in Redis, shared by every gateway that names the same Redis and prefix. */
export class RedisRateLimiter implements RateLimiter {
  readonly #client: Client;
  readonly #clock: () => number;
  readonly #ipLimit: number;
  readonly #ipLockMs: number;
  readonly #keyLimit: number;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #retryAfterMs: number;
  readonly #onLock: RateLimitSettings['onLock'];
  readonly #onDegraded: RedisRateLimiterOptions['onDegraded'];
  /** Decides while Redis cannot. */
  readonly #fallback: MemoryRateLimiter;
  /** performance.now() before which the fallback decides without trying Redis; 0 while Redis is fine. */
  #degradedUntil = 0;
  #degraded = false;
  /** Hits Redis did not answer in time or failed (for tests and metrics). */
  #failures = 0;

  private constructor(client: Client, options: RedisRateLimiterOptions) {
    this.#client = client;
    this.#clock = options.clock ?? Date.now;
    this.#ipLimit = options.ipRequestsPerMinute ?? IP_REQUESTS_PER_MINUTE;
    this.#ipLockMs = options.ipLockMs ?? IP_LOCK_MS;
    this.#keyLimit = options.keyRequestsPerSecond ?? KEY_REQUESTS_PER_SECOND;
    this.#prefix = options.prefix ?? 'bourse:limits:';
    this.#timeoutMs = options.timeoutMs ?? REDIS_LIMITS_TIMEOUT_MS;
    this.#retryAfterMs = options.retryAfterMs ?? REDIS_LIMITS_RETRY_AFTER_MS;
    this.#onLock = options.onLock;
    this.#onDegraded = options.onDegraded;
    this.#fallback = new MemoryRateLimiter({
      clock: this.#clock,
      ipRequestsPerMinute: this.#ipLimit,
      ipLockMs: this.#ipLockMs,
      keyRequestsPerSecond: this.#keyLimit,
      ...(options.onLock === undefined ? {} : { onLock: options.onLock }),
    });
  }

  /**
   * Connects to Redis (waiting at most 5 s) and loads the scripts. Throws when Redis cannot be
   * reached then: a wrong URL is the operator's to fix before the venue opens. Later outages
   * degrade to per-gateway limits instead.
   */
  static async open(options: RedisRateLimiterOptions): Promise<RedisRateLimiter> {
    // The same bounds as the fallback's, checked before a connection is made.
    const perMinute = options.ipRequestsPerMinute ?? IP_REQUESTS_PER_MINUTE;
    if (perMinute < 1 || perMinute > 65_535 || (options.keyRequestsPerSecond ?? 1) < 1) {
      throw new RangeError('rate limits must be positive (per-IP at most 65535 per minute)');
    }
    let started = false;
    const client: Client = createClient({
      url: options.url,
      // A hit fails at once while disconnected (and the gateway decides alone) instead of queueing.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: CONNECT_TIMEOUT_MS,
        // At start a failure is final (open throws); later keep trying, at most every second, so
        // the limits move back to Redis when it returns.
        reconnectStrategy: (retries: number, cause: Error) =>
          started ? Math.min(50 * 2 ** retries, 1_000) : cause,
      },
    });
    // Errors also reject the hits that meet them; the listener keeps them from being uncaught.
    client.on('error', () => undefined);
    const connected = client.connect();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer in ${CONNECT_TIMEOUT_MS} ms`)),
        CONNECT_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([connected, timeout]);
      await client.sendCommand(['SCRIPT', 'LOAD', IP.source]);
      await client.sendCommand(['SCRIPT', 'LOAD', KEY.source]);
      await client.sendCommand(['SCRIPT', 'LOAD', LIFT.source]);
    } catch (error) {
      if (client.isOpen) client.destroy();
      throw new Error(
        `cannot reach the rate-limit Redis at ${redactRedisUrl(options.url)}: ${(error as Error).message}`,
      );
    } finally {
      clearTimeout(timer);
    }
    started = true;
    return new RedisRateLimiter(client, options);
  }

  hitIp(ip: string): RateDecision | Promise<RateDecision> {
    const now = this.#clock();
    if (this.#skipRedis()) return this.#fallback.hitIp(ip);
    const tag = `${this.#prefix}ip:{${ip}}`;
    const keys = [`${tag}:lock`, `${tag}:win`];
    const args = [String(now), String(this.#ipLimit), String(this.#ipLockMs)];
    return this.#run(IP, keys, args).then(
      (reply) => {
        if (reply[0] === 1) return { allowed: true };
        const until = Number(reply[1]);
        if (reply[2] === 1) this.#onLock?.(ip, until, this.#ipLimit);
        return ipLockedDecision(ip, until, now, this.#ipLimit);
      },
      (error: unknown) => this.#degrade(error, () => this.#fallback.hitIp(ip)),
    );
  }

  hitKey(accessKey: string): RateDecision | Promise<RateDecision> {
    const now = this.#clock();
    if (this.#skipRedis()) return this.#fallback.hitKey(accessKey);
    const keys = [`${this.#prefix}key:${accessKey}`];
    return this.#run(KEY, keys, [String(now), String(this.#keyLimit)]).then(
      (reply): RateDecision =>
        reply[0] === 1 ? { allowed: true } : keyRefusedDecision(Number(reply[1]), now, this.#keyLimit),
      (error: unknown) => this.#degrade(error, () => this.#fallback.hitKey(accessKey)),
    );
  }

  /**
   * The limits in force at the clock's now, from Redis (every gateway's): locked IPs, soonest to
   * expire first, then keys that made their whole per-second allowance in the last second. Scans
   * the prefix's keys: for the operator, not the request path. Throws when Redis fails.
   */
  async locks(): Promise<RateLimitLock[]> {
    const now = this.#clock();
    const ipHead = `${this.#prefix}ip:{`;
    const out: RateLimitLock[] = [];
    const lockKeys = await this.#scan(`${ipHead}*}:lock`);
    const untils = lockKeys.length === 0 ? [] : await this.#client.mGet(lockKeys);
    lockKeys.forEach((k, i) => {
      const until = Number(untils[i]);
      if (until > now) out.push({ kind: 'ip', subject: k.slice(ipHead.length, -'}:lock'.length), until });
    });
    out.sort((a, b) => a.until - b.until);
    const keyHead = `${this.#prefix}key:`;
    const keyKeys = await this.#scan(`${keyHead}*`);
    const oldest = await Promise.all(keyKeys.map((k) => this.#client.lIndex(k, this.#keyLimit - 1)));
    keyKeys.forEach((k, i) => {
      const at = oldest[i];
      if (at !== null && at !== undefined && Number(at) > now - 1000) {
        out.push({ kind: 'key', subject: k.slice(keyHead.length), until: Number(at) + 1000 });
      }
    });
    return out;
  }

  /**
   * Lifts the limit on `subject`, an IP or an access key, for every gateway: an IP's lock and its
   * count, or a key's count, start afresh (one script). Returns the lock that was in force (the
   * IP's before the key's, as `locks` lists them), or undefined when none was.
   */
  async lift(subject: string): Promise<RateLimitLock | undefined> {
    const tag = `${this.#prefix}ip:{${subject}}`;
    const keys = [`${tag}:lock`, `${tag}:win`, `${this.#prefix}key:${subject}`];
    const [ipUntil, keyUntil] = (await this.#run(LIFT, keys, [
      String(this.#clock()),
      String(this.#keyLimit),
    ])) as [number, number];
    this.#fallback.lift(subject);
    if (ipUntil >= 0) return { kind: 'ip', subject, until: ipUntil };
    if (keyUntil >= 0) return { kind: 'key', subject, until: keyUntil };
    return undefined;
  }

  async #scan(match: string): Promise<string[]> {
    const found: string[] = [];
    for await (const batch of this.#client.scanIterator({ MATCH: match, COUNT: 1000 })) found.push(...batch);
    return found;
  }

  /** True while this gateway decides on its own (Redis failed within the last `retryAfterMs`). */
  get degraded(): boolean {
    return this.#degraded;
  }

  /** Hits that Redis failed or did not answer in time. */
  get failures(): number {
    return this.#failures;
  }

  /** Entries the fallback holds (it counts only while Redis is away; the locks are in Redis). */
  get fallbackSize(): { ips: number; locks: number; keys: number } {
    return this.#fallback.size;
  }

  async close(): Promise<void> {
    if (this.#client.isOpen) await this.#client.close().catch(() => this.#client.destroy());
  }

  /** True when the fallback should decide: disconnected, or within `retryAfterMs` of a failure. */
  #skipRedis(): boolean {
    if (this.#degradedUntil === 0) return !this.#client.isReady && this.#markDown('disconnected');
    if (performance.now() < this.#degradedUntil || !this.#client.isReady) return true;
    this.#degradedUntil = 0; // try Redis again; #run's success reports the recovery
    return false;
  }

  /** Runs a script, bounded by `timeoutMs`: EVALSHA, then EVAL when Redis lost its script cache. */
  #run(s: Script, keys: string[], args: string[]): Promise<unknown[]> {
    const evalsha = ['EVALSHA', s.sha, String(keys.length), ...keys, ...args];
    const call = this.#client.sendCommand<unknown[]>(evalsha).catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.#client.sendCommand<unknown[]>(['EVAL', s.source, String(keys.length), ...keys, ...args]);
    });
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<unknown[]>((resolve, reject) => {
      // The timeout is decided in the check phase, after the poll phase has read the sockets: when
      // this process's own event loop stalled past the bound, a reply that came in meanwhile wins
      // instead of a false timeout (timers run before the poll phase reads what arrived).
      const expire = (): void => reject(new Error(`no answer in ${this.#timeoutMs} ms`));
      timer = setTimeout(() => setImmediate(expire), this.#timeoutMs);
      call.then(resolve, reject);
    });
    return bounded.then(
      (reply) => {
        clearTimeout(timer);
        if (this.#degraded) this.#restored();
        return reply;
      },
      (error: unknown) => {
        clearTimeout(timer);
        throw error;
      },
    );
  }

  #degrade(error: unknown, decide: () => RateDecision): RateDecision {
    this.#failures++;
    this.#markDown(error instanceof Error ? error.message : String(error));
    return decide();
  }

  /** Starts (or extends) a spell of deciding alone; says so once per spell. Returns true. */
  #markDown(problem: string): boolean {
    this.#degradedUntil = performance.now() + this.#retryAfterMs;
    if (!this.#degraded) {
      this.#degraded = true;
      this.#onDegraded?.(problem);
    }
    return true;
  }

  #restored(): void {
    this.#degraded = false;
    this.#degradedUntil = 0;
    this.#onDegraded?.(undefined);
  }
}

/** The URL without its password, for messages and logs. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'redis://(unparsable URL)';
  }
}
