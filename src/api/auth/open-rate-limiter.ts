/**
 * @module open-rate-limiter — the rate limiter the options ask for: none (`--rate-limits=false`),
 * Redis shared by every gateway (`--limits-url`), else in memory (docs/scale-out.md).
 */
import type { ServerOptions } from '../../config/options.ts';
import { StartRefusedError } from '../../config/start-refusal.ts';
import type { Log } from '../../domain/log.ts';
import { MemoryRateLimiter } from './rate-limit.ts';
import { RedisRateLimiter, redactRedisUrl } from './redis-rate-limit.ts';

/**
 * The venue's limiter, closed with the venue. Only the in-memory one knows its locks for the
 * metrics (`bourse_rate_limit_locked_ips`); Redis's are in Redis, shared by every gateway.
 */
export type VenueRateLimiter = MemoryRateLimiter | RedisRateLimiter;

/**
 * `--limits-url` split into Redis's own URL and the key prefix its `?prefix=` names (several
 * venues, or test runs, on one Redis); without it the limiter's default, `bourse:limits:`.
 */
export function limitsLocation(limitsUrl: string): { readonly url: string; readonly prefix?: string } {
  const u = new URL(limitsUrl);
  const prefix = u.searchParams.get('prefix');
  if (prefix === null) return { url: limitsUrl };
  if (prefix === '') throw new StartRefusedError(`--limits-url: ?prefix= names no prefix`);
  u.searchParams.delete('prefix');
  return { url: u.toString(), prefix };
}

/**
 * The rate limiter the options ask for: none with `--rate-limits=false`, Redis with
 * `--limits-url`, else in memory. Locks are logged (warn) by the gateway that set them; a spell
 * of deciding without Redis is logged when it starts (error) and ends (info).
 */
export async function openRateLimiter(
  options: Pick<ServerOptions, 'rateLimits' | 'limitsUrl' | 'ipRequestsPerMinute' | 'keyRequestsPerSecond'>,
  log: Log,
): Promise<VenueRateLimiter | undefined> {
  if (!options.rateLimits) return undefined;
  const settings = {
    ipRequestsPerMinute: options.ipRequestsPerMinute,
    keyRequestsPerSecond: options.keyRequestsPerSecond,
    onLock: (ip: string, until: number, perMinute: number) =>
      log.warn(
        { ip, until: new Date(until).toISOString() },
        `rate limit: IP ${ip} made more than ${perMinute} trade-API requests in a minute and is locked until ${new Date(until).toISOString()}`,
      ),
  };
  if (options.limitsUrl === undefined) {
    return new MemoryRateLimiter(settings);
  }
  const { url, prefix } = limitsLocation(options.limitsUrl);
  const where = redactRedisUrl(options.limitsUrl);
  const redis = await RedisRateLimiter.open({
    ...settings,
    url,
    ...(prefix === undefined ? {} : { prefix }),
    onDegraded: (problem) => {
      if (problem === undefined) log.info({ limits: where }, `rate limits: Redis at ${where} answers again`);
      else
        log.error(
          { limits: where, problem },
          `rate limits: Redis at ${where} failed (${problem}); this gateway counts on its own until it answers`,
        );
    },
  }).catch((error: unknown) => {
    throw new StartRefusedError((error as Error).message);
  });
  log.info({ limits: where }, `rate limits: in Redis at ${where}, shared by every gateway`);
  return redis;
}
