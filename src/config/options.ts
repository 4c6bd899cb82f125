/**
 * @module options — the server's settings: defaults with units, overridden by environment
 * variables and then by command-line flags, validated (every problem reported at once), frozen.
 */
import { resolve } from 'node:path';
import { replayArgProblem } from '../replay/load.ts';
import { trustedProxyProblem } from './trusted-proxy-entry.ts';
import { didYouMean } from './did-you-mean.ts';
import { journalUrlProblem } from './journal-url.ts';
import {
  clockMode,
  MAX_CLOCK_SPEED,
  MIN_CLOCK_SPEED,
  parseSpeed,
  type ClockSetting,
} from '../domain/clock-speed.ts';

export { clockMode, CLOCK_MODES, type ClockMode, type ClockSetting } from '../domain/clock-speed.ts';

export interface ServerOptions {
  /** Interface to listen on. */
  readonly host: string;
  readonly port: number;
  /** Interface of the admin listener (loopback by default: the admin API is for the operator). */
  readonly adminHost: string;
  /** Port of the admin listener: 8081 by default, so the console keeps its address (0: any free port). */
  readonly adminPort: number;
  /** A Unix socket for the admin API instead of adminHost:adminPort. */
  readonly adminSocket: string | undefined;
  /** Directory for the journal, snapshots, history database, genesis and admin token. */
  readonly dataDir: string;
  /** File holding the master key that seals API secrets (kept outside the data directory). */
  readonly masterKeyFile: string | undefined;
  /** Snapshot after this many commands (0: off). */
  readonly snapshotEveryCommands: number;
  /** Snapshot after this many minutes with activity (0: off). */
  readonly snapshotEveryMinutes: number;
  /** How many snapshots retention keeps (≥ 2). */
  readonly keepSnapshots: number;
  /** Delete journal segments older than the oldest kept snapshot. */
  readonly pruneJournal: boolean;
  /** Allowed difference between a signed request's reqTime and the server clock, ms. */
  readonly reqTimeWindowMs: number;
  /** Refuse User-Agent headers that are not browser-style. */
  readonly strictUserAgent: boolean;
  /** Journal group commit: longest wait before a batch is written, ms. */
  readonly groupCommitMaxDelayMs: number;
  /** Commands accepted but not yet durable, beyond which new ones are refused as busy. */
  readonly maxInFlightCommands: number;
  /** Trade-API requests one IP may make per minute before it is locked for an hour (spec: 10,000). */
  readonly ipRequestsPerMinute: number;
  /** Requests one API key may make per second (spec: 60). */
  readonly keyRequestsPerSecond: number;
  /** Apply the trade API's rate limits at all (off only for benchmarks and load tests). */
  readonly rateLimits: boolean;
  /**
   * The history store on PostgreSQL (postgres://user@host:port/db, `?schema=` optional); none:
   * SQLite in the data directory (docs/history-store.md).
   */
  readonly historyUrl: string | undefined;
  /**
   * Whether this process writes the history store from its applied commands (the default), or
   * only reads it while a `bourse history` process writes it from the stream (docs/scale-out.md).
   */
  readonly writeHistory: boolean;
  /**
   * The journal on a NATS JetStream stream (nats://host:port[,host:port…][?stream=NAME&monitor=
   * http://host:8222[,…]]); none: the file journal in the data directory (docs/scale-out.md).
   */
  readonly journalUrl: string | undefined;
  /** The rate limits in Redis, shared by every gateway (redis://host:port[/db]); none: in memory. */
  readonly limitsUrl: string | undefined;
  /** Open connections on the public listener in total (HTTP and WebSocket). */
  readonly maxConnections: number;
  /** Open connections from one address (IPv6: one /64); trusted proxies are exempt. */
  readonly maxConnectionsPerIp: number;
  /** Time for a request's headers to arrive, ms. */
  readonly headersTimeoutMs: number;
  /** Time for a whole request (headers and body) to arrive, ms. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept, ms. */
  readonly keepAliveTimeoutMs: number;
  /** Proxies (addresses or CIDR ranges) whose X-Forwarded-For names the client; none by default. */
  readonly trustedProxies: readonly string[];
  /**
   * The demo market (docs/sandbox.md, "When it runs"): true, the operator asks for it; false,
   * never; undefined (not said), only on the README's venue: loopback and the default ./data.
   */
  readonly demo: boolean | undefined;
  /**
   * `real`: the wall clock; `manual`: venue time moves only when the operator advances it;
   * `speed:<n>`: venue time runs n times faster than the wall clock (the last two: sandboxes only).
   */
  readonly clock: ClockSetting;
  /** Declares the venue a sandbox: the demo market on a fresh data directory, `--clock=manual`. */
  readonly sandbox: boolean;
  /** Historical market data to replay (`<file>` or `<market>=<file>`; sandboxes only; docs/sandbox.md, "Replay"). */
  readonly replay: readonly string[];
  /** The least severe log level written (docs/operations.md, "Logs"). */
  readonly logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
  /** `json` lines, `pretty` lines for a person, or `auto` (pretty on a terminal). */
  readonly logFormat: 'auto' | 'json' | 'pretty';
  /** A public request slower than this is logged (warn), ms (0: never). */
  readonly slowRequestMs: number;
  /** Keep the Prometheus metrics (`/metrics` on the admin listener); false drops them and their cost. */
  readonly metrics: boolean;
  /** Serve `/metrics` on the public listener too. */
  readonly publicMetrics: boolean;
  /** Commands the history store may be behind the engine while `/ready` still answers 200. */
  readonly readyMaxHistoryLag: number;
}

/** Why a `--clock` value is refused, or undefined when it is real, manual or speed:<n>. */
export function clockProblem(raw: string): string | undefined {
  if (raw === 'real' || raw === 'manual') return undefined;
  if (raw.startsWith('speed:')) {
    const text = raw.slice('speed:'.length);
    if (parseSpeed(text) !== undefined) return undefined;
    return (
      `'${raw.slice(0, 40)}': the speed is a number from ${MIN_CLOCK_SPEED} to ${MAX_CLOCK_SPEED} ` +
      '(at most 3 decimals), such as speed:60 or speed:1000'
    );
  }
  return `expected real, manual or speed:<n>, got '${raw.slice(0, 40)}'`;
}

export const DEFAULT_OPTIONS: ServerOptions = Object.freeze({
  host: '127.0.0.1',
  port: 8080,
  adminHost: '127.0.0.1',
  adminPort: 8081,
  adminSocket: undefined,
  dataDir: './data',
  masterKeyFile: undefined,
  snapshotEveryCommands: 1_000_000,
  snapshotEveryMinutes: 10,
  keepSnapshots: 2,
  pruneJournal: false,
  reqTimeWindowMs: 10_000,
  strictUserAgent: false,
  groupCommitMaxDelayMs: 1,
  maxInFlightCommands: 100_000,
  ipRequestsPerMinute: 10_000,
  keyRequestsPerSecond: 60,
  rateLimits: true,
  historyUrl: undefined,
  writeHistory: true,
  journalUrl: undefined,
  limitsUrl: undefined,
  maxConnections: 10_000,
  maxConnectionsPerIp: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 20_000,
  keepAliveTimeoutMs: 5_000,
  trustedProxies: Object.freeze([]),
  demo: undefined,
  clock: 'real',
  sandbox: false,
  replay: Object.freeze([]),
  logLevel: 'info',
  logFormat: 'auto',
  slowRequestMs: 1_000,
  metrics: true,
  publicMetrics: false,
  readyMaxHistoryLag: 50_000,
});

interface Setting {
  readonly key: keyof ServerOptions;
  readonly flag: string;
  readonly env: string;
  /** `list`: comma-separated text, each item checked by `item`. */
  readonly kind: 'string' | 'int' | 'bool' | 'list' | 'choice';
  readonly item?: (text: string) => string | undefined;
  /** The values a `choice` setting (or a string) takes. */
  readonly choices?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  /** The value's placeholder in `--help` (default by kind). */
  readonly value?: string;
  /** What the setting does, for `--help` (one line; the default is added from DEFAULT_OPTIONS). */
  readonly help: string;
}

const SETTINGS: readonly Setting[] = [
  {
    key: 'host',
    flag: '--host',
    env: 'BOURSE_HOST',
    kind: 'string',
    value: '<host>',
    help: 'interface of the public API',
  },
  {
    key: 'port',
    flag: '--port',
    env: 'BOURSE_PORT',
    kind: 'int',
    min: 0,
    max: 65_535,
    help: 'port of the public API (0: any free port)',
  },
  {
    key: 'adminHost',
    flag: '--admin-host',
    env: 'BOURSE_ADMIN_HOST',
    kind: 'string',
    value: '<host>',
    help: 'interface of the admin API (keep it on loopback)',
  },
  {
    key: 'adminPort',
    flag: '--admin-port',
    env: 'BOURSE_ADMIN_PORT',
    kind: 'int',
    min: 0,
    max: 65_535,
    help: 'port of the admin API and the operator console (0: any free port; the CLI reads it from <data>/listen.json)',
  },
  {
    key: 'adminSocket',
    flag: '--admin-socket',
    env: 'BOURSE_ADMIN_SOCKET',
    kind: 'string',
    value: '<path>',
    help: 'serve the admin API on this Unix socket instead of admin-host:admin-port',
  },
  {
    key: 'dataDir',
    flag: '--data',
    env: 'BOURSE_DATA',
    kind: 'string',
    value: '<dir>',
    help: 'data directory: journal, snapshots, history, chain, genesis, admin token, listen.json',
  },
  {
    key: 'masterKeyFile',
    flag: '--master-key-file',
    env: 'BOURSE_MASTER_KEY_FILE',
    kind: 'string',
    value: '<file>',
    help: 'file with the key that seals API secrets (BOURSE_MASTER_KEY may hold it as 64 hex digits)',
  },
  {
    key: 'snapshotEveryCommands',
    flag: '--snapshot-every',
    env: 'BOURSE_SNAPSHOT_EVERY',
    kind: 'int',
    min: 0,
    help: 'snapshot after this many commands (0: off)',
  },
  {
    key: 'snapshotEveryMinutes',
    flag: '--snapshot-minutes',
    env: 'BOURSE_SNAPSHOT_MINUTES',
    kind: 'int',
    min: 0,
    help: 'snapshot after this many minutes with activity (0: off)',
  },
  {
    key: 'keepSnapshots',
    flag: '--keep-snapshots',
    env: 'BOURSE_KEEP_SNAPSHOTS',
    kind: 'int',
    min: 2,
    max: 1000,
    help: 'snapshots kept by retention',
  },
  {
    key: 'pruneJournal',
    flag: '--prune-journal',
    env: 'BOURSE_PRUNE_JOURNAL',
    kind: 'bool',
    help: 'delete journal segments older than the oldest kept snapshot',
  },
  {
    key: 'reqTimeWindowMs',
    flag: '--req-time-window-ms',
    env: 'BOURSE_REQ_TIME_WINDOW_MS',
    kind: 'int',
    min: 0,
    help: "allowed difference between a signed request's reqTime and the server clock, ms",
  },
  {
    key: 'strictUserAgent',
    flag: '--strict-user-agent',
    env: 'BOURSE_STRICT_USER_AGENT',
    kind: 'bool',
    help: 'refuse non-browser User-Agents (a missing one is always refused)',
  },
  {
    key: 'groupCommitMaxDelayMs',
    flag: '--group-commit-ms',
    env: 'BOURSE_GROUP_COMMIT_MS',
    kind: 'int',
    min: 0,
    max: 100,
    help: 'longest wait before a journal batch is written, ms',
  },
  {
    key: 'maxInFlightCommands',
    flag: '--max-in-flight',
    env: 'BOURSE_MAX_IN_FLIGHT',
    kind: 'int',
    min: 1,
    help: 'commands not yet durable beyond which new ones are refused as busy',
  },
  {
    key: 'ipRequestsPerMinute',
    flag: '--ip-requests-per-minute',
    env: 'BOURSE_IP_REQUESTS_PER_MINUTE',
    kind: 'int',
    min: 1,
    // The in-memory limiter counts per second in 16 bits.
    max: 65_535,
    help: 'trade-API requests per IP per minute, then a one-hour lock',
  },
  {
    key: 'keyRequestsPerSecond',
    flag: '--key-requests-per-second',
    env: 'BOURSE_KEY_REQUESTS_PER_SECOND',
    kind: 'int',
    min: 1,
    help: 'requests per API key per second',
  },
  {
    key: 'rateLimits',
    flag: '--rate-limits',
    env: 'BOURSE_RATE_LIMITS',
    kind: 'bool',
    help: '--rate-limits=false switches the rate limits off (load tests only)',
  },
  {
    key: 'historyUrl',
    flag: '--history-url',
    env: 'BOURSE_HISTORY_URL',
    kind: 'string',
    value: '<postgres-url>',
    help: 'the history store on PostgreSQL (postgres://user@host:port/db[?schema=name]); none: SQLite in --data',
  },
  {
    key: 'writeHistory',
    flag: '--write-history',
    env: 'BOURSE_WRITE_HISTORY',
    kind: 'bool',
    help: '--write-history=false: only read the history store, which a `bourse history` process writes from the stream',
  },
  {
    key: 'journalUrl',
    flag: '--journal-url',
    env: 'BOURSE_JOURNAL_URL',
    kind: 'string',
    value: '<nats-url>',
    help: 'the journal on a JetStream stream (nats://host:4222[?stream=NAME&monitor=http://host:8222]; the server must run sync_interval: always); none: files in --data',
  },
  {
    key: 'limitsUrl',
    flag: '--limits-url',
    env: 'BOURSE_LIMITS_URL',
    kind: 'string',
    value: '<redis-url>',
    help: 'the rate limits in Redis, shared by every gateway (redis://host:6379[/db]); none: in memory',
  },
  {
    key: 'maxConnections',
    flag: '--max-connections',
    env: 'BOURSE_MAX_CONNECTIONS',
    kind: 'int',
    min: 1,
    help: 'open connections on the public listener, HTTP and WebSocket together',
  },
  {
    key: 'maxConnectionsPerIp',
    flag: '--max-connections-per-ip',
    env: 'BOURSE_MAX_CONNECTIONS_PER_IP',
    kind: 'int',
    min: 1,
    help: 'open connections from one address (IPv6: one /64); trusted proxies are exempt',
  },
  {
    key: 'headersTimeoutMs',
    flag: '--headers-timeout-ms',
    env: 'BOURSE_HEADERS_TIMEOUT_MS',
    kind: 'int',
    min: 1,
    help: "time for a request's headers to arrive, ms",
  },
  {
    key: 'requestTimeoutMs',
    flag: '--request-timeout-ms',
    env: 'BOURSE_REQUEST_TIMEOUT_MS',
    kind: 'int',
    min: 1,
    help: 'time for a whole request (headers and body) to arrive, ms',
  },
  {
    key: 'keepAliveTimeoutMs',
    flag: '--keep-alive-timeout-ms',
    env: 'BOURSE_KEEP_ALIVE_TIMEOUT_MS',
    kind: 'int',
    min: 1,
    help: 'idle keep-alive connections kept, ms (behind a load balancer: above its idle timeout)',
  },
  {
    key: 'trustedProxies',
    flag: '--trusted-proxies',
    env: 'BOURSE_TRUSTED_PROXIES',
    kind: 'list',
    item: trustedProxyProblem,
    value: '<addresses>',
    help: 'proxies (addresses or CIDR ranges, comma-separated) whose X-Forwarded-For names the client',
  },
  {
    key: 'demo',
    flag: '--demo',
    env: 'BOURSE_DEMO',
    kind: 'bool',
    help: "the demo market on a fresh venue: true runs it, false never; unset: only on loopback with the default ./data (the README's npm start)",
  },
  {
    key: 'clock',
    flag: '--clock',
    env: 'BOURSE_CLOCK',
    kind: 'string',
    value: 'real|manual|speed:<n>',
    help: 'manual: venue time moves only with bourse clock advance; speed:<n>: n times faster than real time, changed with bourse clock speed (both only with --sandbox)',
  },
  {
    key: 'sandbox',
    flag: '--sandbox',
    env: 'BOURSE_SANDBOX',
    kind: 'bool',
    help: 'declare the venue a sandbox: the demo market on a fresh data directory, and --clock=manual or speed:<n> allowed',
  },
  {
    key: 'replay',
    flag: '--replay',
    env: 'BOURSE_REPLAY',
    kind: 'list',
    item: replayArgProblem,
    value: '<files>',
    help: 'replay historical market data (Binance kline or aggTrades CSV, ccxt OHLCV or trades JSON; <file> or <market>=<file>, comma-separated) on a sandbox',
  },
  {
    key: 'logLevel',
    flag: '--log-level',
    env: 'BOURSE_LOG_LEVEL',
    kind: 'choice',
    choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
    help: 'least severe log level written',
  },
  {
    key: 'logFormat',
    flag: '--log-format',
    env: 'BOURSE_LOG_FORMAT',
    kind: 'choice',
    choices: ['auto', 'json', 'pretty'],
    help: 'json lines, pretty lines for a person, or auto (pretty on a terminal)',
  },
  {
    key: 'slowRequestMs',
    flag: '--slow-request-ms',
    env: 'BOURSE_SLOW_REQUEST_MS',
    kind: 'int',
    min: 0,
    help: 'log a public request slower than this, ms (0: never)',
  },
  {
    key: 'metrics',
    flag: '--metrics',
    env: 'BOURSE_METRICS',
    kind: 'bool',
    help: 'Prometheus metrics at /metrics on the admin listener (--metrics=false: none, and no cost)',
  },
  {
    key: 'publicMetrics',
    flag: '--public-metrics',
    env: 'BOURSE_PUBLIC_METRICS',
    kind: 'bool',
    help: 'serve /metrics on the public listener too',
  },
  {
    key: 'readyMaxHistoryLag',
    flag: '--ready-max-history-lag',
    env: 'BOURSE_READY_MAX_HISTORY_LAG',
    kind: 'int',
    min: 0,
    help: 'commands the history store may be behind while /ready answers 200',
  },
];

/** Every server flag with its environment variable (for checks that the docs list them all). */
export const SERVER_FLAGS: readonly { readonly flag: string; readonly env: string }[] = SETTINGS.map(
  ({ flag, env }) => ({ flag, env }),
);

/** The server's flags as a table (flag, environment, default, meaning), `extra` rows first. */
export function serverFlagTable(
  extra: readonly (readonly [string, string, string, string])[] = [],
): string[] {
  const rows = [
    ...extra,
    ...SETTINGS.map((s) => {
      const value =
        s.kind === 'bool'
          ? '[=true|false]'
          : s.kind === 'choice'
            ? ` ${(s.choices ?? []).join('|')}`
            : ` ${s.value ?? (s.kind === 'int' ? '<n>' : '<text>')}`;
      const fallback = DEFAULT_OPTIONS[s.key];
      const shown = Array.isArray(fallback) ? fallback.join(',') || 'none' : String(fallback);
      return [`${s.flag}${value}`, s.env, fallback === undefined ? '-' : shown, s.help] as const;
    }),
  ];
  const width = (i: number): number => Math.max(...rows.map((r) => r[i]?.length ?? 0));
  const [w0, w1, w2] = [width(0), width(1), width(2)];
  const head = ['flag', 'environment', 'default', 'meaning'] as const;
  return [
    ...[head, ...rows].map((r) => `  ${r[0].padEnd(w0)}  ${r[1].padEnd(w1)}  ${r[2].padEnd(w2)}  ${r[3]}`),
    '',
    `  --help${' '.repeat(w0 - 6)}  prints this help`,
  ];
}

/** The flags `npm start` takes, with their environment variables and defaults (`--help`). */
export function serverUsage(): string {
  return [
    'usage: npm start -- [options]   (or: node src/main.ts [options])',
    '',
    'Starts the exchange: the public API on --host:--port, the admin API on its own listener',
    '(--admin-host:--admin-port, or --admin-socket). Flags win over environment variables, which',
    'win over the defaults. Where it listens is written to <data>/listen.json for the bourse CLI.',
    '',
    ...serverFlagTable(),
  ].join('\n');
}

/** True when `argv` asks for the usage (`--help` or `-h`) rather than a start. */
export const wantsHelp = (argv: readonly string[]): boolean => argv.includes('--help') || argv.includes('-h');

/**
 * Reads options from `env` then `argv` (flags win). Throws one Error listing every problem:
 * unknown flags, missing values, values of the wrong kind or out of range.
 */
export function loadOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ServerOptions {
  const values: Record<string, unknown> = { ...DEFAULT_OPTIONS };
  const problems: string[] = [];
  const set = (s: Setting, raw: string, source: string): void => {
    if (s.kind === 'string') {
      if (raw === '') problems.push(`${source}: empty value`);
      else if (s.choices !== undefined && !s.choices.includes(raw))
        problems.push(`${source}: expected ${s.choices.join(' or ')}, got '${raw}'`);
      else values[s.key] = raw;
    } else if (s.kind === 'list') {
      const items = raw
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
      const bad = items.map((item) => s.item?.(item)).filter((p) => p !== undefined);
      if (bad.length > 0) problems.push(`${source}: ${bad.join('; ')}`);
      else values[s.key] = Object.freeze(items);
    } else if (s.kind === 'choice') {
      const choices = s.choices ?? [];
      if (choices.includes(raw)) values[s.key] = raw;
      else problems.push(`${source}: expected one of ${choices.join(', ')}, got '${raw}'`);
    } else if (s.kind === 'bool') {
      if (raw === 'true' || raw === '1' || raw === '') values[s.key] = true;
      else if (raw === 'false' || raw === '0') values[s.key] = false;
      else problems.push(`${source}: expected true or false, got '${raw}'`);
    } else {
      const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n)) problems.push(`${source}: expected a whole number, got '${raw}'`);
      else if ((s.min !== undefined && n < s.min) || (s.max !== undefined && n > s.max)) {
        problems.push(`${source}: ${n} is outside ${s.min ?? '-∞'}..${s.max ?? '∞'}`);
      } else values[s.key] = n;
    }
  };
  for (const s of SETTINGS) {
    const raw = env[s.env];
    if (raw !== undefined) set(s, raw, s.env);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const s = SETTINGS.find((x) => x.flag === flag);
    if (s === undefined) {
      if (!flag.startsWith('-')) {
        problems.push(`unexpected argument '${flag}': every setting is a --flag (npm start -- --help)`);
        continue;
      }
      problems.push(
        `unknown option ${flag}${didYouMean(
          flag,
          SETTINGS.map((x) => x.flag),
        )}`,
      );
      // Its value, if it had one, is no second problem: `--prot 9000` is one mistake.
      if (inline === undefined && argv[i + 1] !== undefined && !(argv[i + 1] as string).startsWith('-')) i++;
      continue;
    }
    if (inline !== undefined) set(s, inline, flag);
    else if (s.kind === 'bool') set(s, '', flag);
    else if (i + 1 < argv.length) set(s, argv[++i] as string, flag);
    else problems.push(`${flag}: missing value`);
  }
  if (
    values['adminSocket'] === undefined &&
    values['adminPort'] !== 0 &&
    values['adminPort'] === values['port'] &&
    values['adminHost'] === values['host']
  ) {
    problems.push(
      `--admin-port: ${String(values['port'])} is the public port too (--port): the admin API needs its own; ` +
        `choose another for one of them (the admin port is ${DEFAULT_OPTIONS.adminPort} unless told)`,
    );
  }
  const url = values['historyUrl'];
  if (typeof url === 'string' && !/^postgres(ql)?:\/\/[^/]/.test(url)) {
    problems.push(`--history-url: expected postgres://user@host:port/database, got '${redactPassword(url)}'`);
  }
  const limitsUrl = values['limitsUrl'];
  if (typeof limitsUrl === 'string' && !/^rediss?:\/\/[^/]/.test(limitsUrl)) {
    problems.push(`--limits-url: expected redis://host:port[/db], got '${redactPassword(limitsUrl)}'`);
  }
  const journalUrl = values['journalUrl'];
  if (typeof journalUrl === 'string') {
    const problem = journalUrlProblem(journalUrl);
    if (problem !== undefined) problems.push(`--journal-url: ${problem}`);
  }
  if (
    problems.length === 0 &&
    (values['headersTimeoutMs'] as number) > (values['requestTimeoutMs'] as number)
  ) {
    problems.push(
      '--headers-timeout-ms must not exceed --request-timeout-ms (the headers are part of the request)',
    );
  }
  const options = values as unknown as ServerOptions;
  const badClock = clockProblem(options.clock);
  if (badClock !== undefined) {
    problems.push(`--clock: ${badClock}`);
  } else if (options.clock === 'manual' && !isSandbox(options)) {
    problems.push(
      '--clock=manual: only a sandbox may stop time: declare this venue one with --sandbox (BOURSE_SANDBOX=true)',
    );
  } else if (clockMode(options.clock) === 'speed' && !isSandbox(options)) {
    problems.push(
      `--clock=${options.clock}: only a sandbox may run time fast: declare this venue one with --sandbox (BOURSE_SANDBOX=true)`,
    );
  }
  if (options.replay.length > 0 && !isSandbox(options)) {
    problems.push(
      '--replay: only a sandbox replays history: declare this venue one with --sandbox (BOURSE_SANDBOX=true)',
    );
  }
  if (problems.length > 0) throw new Error(`invalid options:\n  ${problems.join('\n  ')}`);
  return Object.freeze(options);
}

/** Whether `host` names this machine's loopback interface only. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * A sandbox is what the operator declares one (`--sandbox`), never what a venue's address or data
 * directory suggest: a production venue behind a reverse proxy listens on loopback too.
 */
export function isSandbox(options: Pick<ServerOptions, 'sandbox'>): boolean {
  return options.sandbox;
}

/** Whether the operator's settings ask for the demo market, and if not, why (for the start-up log). */
export type DemoAsk = { readonly run: true } | { readonly run: false; readonly reason: string };

/**
 * The operator's part of the demo rule (the venue's part, fresh data or a running demo, is
 * src/demo/demo-market.ts's `decideDemo`): `--demo` or `--sandbox` asks for it, `--demo=false`
 * refuses it; unsaid, only the README's one command gets it: `npm start` on loopback with the
 * default ./data. Any other data directory (a systemd unit's BOURSE_DATA) starts clean.
 */
export function demoAsked(options: Pick<ServerOptions, 'demo' | 'sandbox' | 'host' | 'dataDir'>): DemoAsk {
  if (options.demo === false) return { run: false, reason: 'demo off (--demo=false)' };
  if (options.demo === true || options.sandbox) return { run: true };
  const ask = 'start with --demo or --sandbox to have it';
  if (!isLoopbackHost(options.host))
    return { run: false, reason: `no demo: the venue listens beyond loopback (${ask})` };
  if (resolve(options.dataDir) !== resolve(DEFAULT_OPTIONS.dataDir)) {
    return {
      run: false,
      reason: `no demo: the data directory ${resolve(options.dataDir)} is not the default ${DEFAULT_OPTIONS.dataDir} (${ask})`,
    };
  }
  return { run: true };
}

/** The options as log fields (every setting by name), a password in a URL replaced. */
export function shownOptions(options: ServerOptions): Record<string, unknown> {
  return Object.fromEntries(
    SETTINGS.map((s) => {
      const value = options[s.key];
      return [s.key, typeof value === 'string' ? redactPassword(value) : value];
    }),
  );
}

/** A URL's password replaced, for logs and messages. */
function redactPassword(text: string): string {
  return text.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}
