/**
 * @module options — the server's settings: defaults with units, overridden by environment
 * variables and then by command-line flags, validated (every problem reported at once), frozen.
 */

export interface ServerOptions {
  /** Interface to listen on. */
  readonly host: string;
  readonly port: number;
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
}

export const DEFAULT_OPTIONS: ServerOptions = Object.freeze({
  host: '127.0.0.1',
  port: 8080,
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
});

interface Setting {
  readonly key: keyof ServerOptions;
  readonly flag: string;
  readonly env: string;
  readonly kind: 'string' | 'int' | 'bool';
  readonly min?: number;
  readonly max?: number;
}

const SETTINGS: readonly Setting[] = [
  { key: 'host', flag: '--host', env: 'BOURSE_HOST', kind: 'string' },
  { key: 'port', flag: '--port', env: 'BOURSE_PORT', kind: 'int', min: 0, max: 65_535 },
  { key: 'dataDir', flag: '--data', env: 'BOURSE_DATA', kind: 'string' },
  { key: 'masterKeyFile', flag: '--master-key-file', env: 'BOURSE_MASTER_KEY_FILE', kind: 'string' },
  {
    key: 'snapshotEveryCommands',
    flag: '--snapshot-every',
    env: 'BOURSE_SNAPSHOT_EVERY',
    kind: 'int',
    min: 0,
  },
  {
    key: 'snapshotEveryMinutes',
    flag: '--snapshot-minutes',
    env: 'BOURSE_SNAPSHOT_MINUTES',
    kind: 'int',
    min: 0,
  },
  {
    key: 'keepSnapshots',
    flag: '--keep-snapshots',
    env: 'BOURSE_KEEP_SNAPSHOTS',
    kind: 'int',
    min: 2,
    max: 1000,
  },
  { key: 'pruneJournal', flag: '--prune-journal', env: 'BOURSE_PRUNE_JOURNAL', kind: 'bool' },
  {
    key: 'reqTimeWindowMs',
    flag: '--req-time-window-ms',
    env: 'BOURSE_REQ_TIME_WINDOW_MS',
    kind: 'int',
    min: 0,
  },
  { key: 'strictUserAgent', flag: '--strict-user-agent', env: 'BOURSE_STRICT_USER_AGENT', kind: 'bool' },
  {
    key: 'groupCommitMaxDelayMs',
    flag: '--group-commit-ms',
    env: 'BOURSE_GROUP_COMMIT_MS',
    kind: 'int',
    min: 0,
    max: 100,
  },
  { key: 'maxInFlightCommands', flag: '--max-in-flight', env: 'BOURSE_MAX_IN_FLIGHT', kind: 'int', min: 1 },
  {
    key: 'ipRequestsPerMinute',
    flag: '--ip-requests-per-minute',
    env: 'BOURSE_IP_REQUESTS_PER_MINUTE',
    kind: 'int',
    min: 1,
    // The in-memory limiter counts per second in 16 bits.
    max: 65_535,
  },
  {
    key: 'keyRequestsPerSecond',
    flag: '--key-requests-per-second',
    env: 'BOURSE_KEY_REQUESTS_PER_SECOND',
    kind: 'int',
    min: 1,
  },
  { key: 'rateLimits', flag: '--rate-limits', env: 'BOURSE_RATE_LIMITS', kind: 'bool' },
];

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
      else values[s.key] = raw;
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
      problems.push(`unknown option ${flag}`);
      continue;
    }
    if (inline !== undefined) set(s, inline, flag);
    else if (s.kind === 'bool') set(s, '', flag);
    else if (i + 1 < argv.length) set(s, argv[++i] as string, flag);
    else problems.push(`${flag}: missing value`);
  }
  if (problems.length > 0) throw new Error(`invalid options:\n  ${problems.join('\n  ')}`);
  return Object.freeze(values as unknown as ServerOptions);
}

/** The options as `name=value` lines for the start-up log. */
export function describeOptions(options: ServerOptions): string {
  return SETTINGS.map((s) => `${s.key}=${String(options[s.key] ?? '(none)')}`).join(' ');
}
