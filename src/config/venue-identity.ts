/**
 * @module venue-identity — what a data directory says about the venue it holds (`venue.json`): its
 * id, the genesis it started from (and that genesis's hash), and which master key opens its API
 * secrets (the key's id, a fingerprint, never the key). Checked at every start: an edited
 * `genesis.json` and a missing or wrong master key are refused in one line saying what to do.
 */
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { loadMasterKey, masterKeyId, MASTER_KEY_ENV, writeMasterKeyFile } from './master-key.ts';
import type { VenueConfig } from '../domain/specs.ts';
import { ensureGenesis, FILE_MODE, GENESIS_FILE, writeAtomic } from './data-dir.ts';
import { StartRefusedError } from './start-refusal.ts';

export const VENUE_FILE = 'venue.json';
const VENUE_FORMAT = 'bourse-venue';
const VENUE_FORMAT_VERSION = 1;
/** How many changes a refused genesis names before "and N more". */
const CHANGES_SHOWN = 6;

/** The content of `venue.json`. */
export interface VenueIdentity {
  readonly format: typeof VENUE_FORMAT;
  readonly version: number;
  /** 128 random bits, hex: names the venue's default master key file. */
  readonly venueId: string;
  /** ISO time of the first start. */
  readonly createdAt: string;
  /** sha256 of the genesis in canonical JSON (sorted keys), hex. */
  readonly genesisHash: string;
  /** `masterKeyId` of the master key that seals this venue's API secrets. */
  readonly masterKeyId: string;
  /** The genesis the venue started with, so that a change can be named. */
  readonly genesis: VenueConfig;
}

/** JSON with object keys sorted: the same value gives the same text, however the file is laid out. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The genesis's hash: sha256 of its canonical JSON, hex. */
export function genesisHash(genesis: VenueConfig): string {
  return createHash('sha256').update(canonical(genesis)).digest('hex');
}

/** Longest value text a change names in full. */
const SHOWN_CHARS = 60;

const shown = (value: unknown): string => {
  const text = value === undefined ? 'absent' : canonical(value);
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
};

/** The key of an entry in one of the genesis's lists (`name` of coins and markets, `coin` of funds). */
function entryKey(entry: unknown): string | undefined {
  if (entry === null || typeof entry !== 'object') return undefined;
  const record = entry as Record<string, unknown>;
  const key = record['name'] ?? record['coin'];
  return typeof key === 'string' ? key : undefined;
}

const SINGULAR: Readonly<Record<string, string>> = {
  coins: 'coin',
  markets: 'market',
  funds: 'funds of coin',
  settings: 'setting',
};

/** Field-by-field changes of two objects, as `<label> <field> changed from a to b`. */
function fieldChanges(label: string, before: unknown, after: unknown): string[] {
  if (before === null || after === null || typeof before !== 'object' || typeof after !== 'object')
    return canonical(before) === canonical(after)
      ? []
      : [`${label} changed from ${shown(before)} to ${shown(after)}`];
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return fields
    .filter((f) => canonical(a[f] ?? null) !== canonical(b[f] ?? null))
    .map((f) => `${label} ${f} changed from ${shown(a[f])} to ${shown(b[f])}`);
}

/**
 * What changed from the genesis `before` to `after`, one phrase per change in the operator's
 * words: `coin doge added`, `market btc_usdt makerFee changed from 2000 to 1000`, `setting
 * cancelAllAfterMs changed from …`. Empty when they are the same value.
 */
export function describeGenesisChanges(before: VenueConfig, after: VenueConfig): string[] {
  const a = before as unknown as Record<string, unknown>;
  const b = after as unknown as Record<string, unknown>;
  const changes: string[] = [];
  for (const section of [...new Set([...Object.keys(a), ...Object.keys(b)])]) {
    const was = a[section];
    const now = b[section];
    if (canonical(was ?? null) === canonical(now ?? null)) continue;
    const found = changes.length;
    const what = SINGULAR[section] ?? section;
    const keyed = (list: unknown): Map<string, unknown> | undefined => {
      if (list === undefined) return new Map();
      if (!Array.isArray(list)) return undefined;
      const map = new Map<string, unknown>();
      for (const entry of list) {
        const key = entryKey(entry);
        if (key === undefined || map.has(key)) return undefined;
        map.set(key, entry);
      }
      return map;
    };
    const wasByKey = keyed(was);
    const nowByKey = keyed(now);
    if (wasByKey === undefined || nowByKey === undefined) {
      changes.push(...fieldChanges(what, was, now));
      continue;
    }
    for (const [key, entry] of wasByKey) {
      if (!nowByKey.has(key)) changes.push(`${what} ${key} removed`);
      else changes.push(...fieldChanges(`${what} ${key}`, entry, nowByKey.get(key)));
    }
    for (const key of nowByKey.keys()) if (!wasByKey.has(key)) changes.push(`${what} ${key} added`);
    if (changes.length === found) changes.push(`${section} reordered`);
  }
  return changes;
}

/** `venue.json` of `root`, or undefined when there is none (a new venue, or one from before it existed). */
export function readVenueIdentity(root: string): VenueIdentity | undefined {
  const path = join(root, VENUE_FILE);
  if (!existsSync(path)) return undefined;
  let parsed: Partial<VenueIdentity>;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<VenueIdentity>;
  } catch (error) {
    throw new StartRefusedError(`cannot read ${path}: ${(error as Error).message}`);
  }
  if (
    parsed.format !== VENUE_FORMAT ||
    typeof parsed.venueId !== 'string' ||
    !/^[0-9a-f]{32}$/.test(parsed.venueId) ||
    typeof parsed.genesisHash !== 'string' ||
    typeof parsed.masterKeyId !== 'string' ||
    typeof parsed.genesis !== 'object'
  ) {
    throw new StartRefusedError(
      `${path} is not a venue file (format ${VENUE_FORMAT}, version ${VENUE_FORMAT_VERSION})`,
    );
  }
  return parsed as VenueIdentity;
}

/**
 * The genesis of the data directory `root`: `genesis.json`, written first when it is missing —
 * from `venue.json`'s copy for a venue that has one (a lost file is put back, not replaced by
 * today's defaults), else from the defaults (a new venue).
 */
export function ensureVenueGenesis(root: string): VenueConfig {
  const recorded = readVenueIdentity(root);
  if (recorded !== undefined && !existsSync(join(root, GENESIS_FILE))) {
    writeAtomic(join(root, GENESIS_FILE), `${JSON.stringify(recorded.genesis, null, 2)}\n`, FILE_MODE);
  }
  return ensureGenesis(root);
}

/**
 * Refuses (StartRefusedError) a genesis other than the one the venue started with, naming what
 * changed. The recorded genesis is checked against its own hash too.
 */
export function checkGenesis(root: string, identity: VenueIdentity, genesis: VenueConfig): void {
  if (genesisHash(identity.genesis) !== identity.genesisHash) {
    throw new StartRefusedError(
      `${join(root, VENUE_FILE)}: its genesis does not match its genesisHash (the file was edited); restore it from a backup`,
    );
  }
  if (genesisHash(genesis) === identity.genesisHash) return;
  const changes = describeGenesisChanges(identity.genesis, genesis);
  const listed =
    changes.length > CHANGES_SHOWN
      ? `${changes.slice(0, CHANGES_SHOWN).join('; ')}; and ${changes.length - CHANGES_SHOWN} more`
      : changes.join('; ');
  throw new StartRefusedError(
    `${join(root, GENESIS_FILE)} was edited after the venue started (${listed}): the genesis is part of the ` +
      `venue's history and replaying the journal from another one would rewrite it. Put the file back ` +
      `(the original is the "genesis" of ${VENUE_FILE}); change coins, markets and fees with the admin API instead`,
  );
}

/**
 * Where the venue's master key lives when the operator names none: in the user's configuration
 * directory, named by the venue's id, so that a data directory moved or restored elsewhere on the
 * machine still finds it (and a copy on another machine needs only this one file beside it).
 */
export function defaultMasterKeyFile(venueId: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(masterKeyDir(env), `master-${venueId}.key`);
}

function masterKeyDir(env: NodeJS.ProcessEnv): string {
  return join(env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'bourse');
}

/** The default key file of versions before venue.json: named after the data directory's path. */
function legacyMasterKeyFile(root: string, env: NodeJS.ProcessEnv): string {
  const id = resolve(root)
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return join(masterKeyDir(env), `master-${id}.key`);
}

/** Whether `root` already holds a venue's data (journal records or snapshots). */
function hasData(root: string): boolean {
  const nonEmpty = (dir: string): boolean => existsSync(dir) && readdirSync(dir).length > 0;
  return nonEmpty(join(root, 'journal')) || nonEmpty(join(root, 'snapshots'));
}

export interface OpenVenueOptions {
  /** The key file the operator named (`--master-key-file`, `BOURSE_MASTER_KEY_FILE`). */
  readonly masterKeyFile: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
  /** Told what was created (a new venue file, a new master key). */
  readonly info: (message: string) => void;
  readonly warn: (message: string) => void;
}

export interface OpenedVenue {
  readonly identity: VenueIdentity;
  readonly masterKey: Buffer;
}

/**
 * Opens the venue of the data directory `root` (whose lock the caller holds) with `genesis`, the
 * content of its `genesis.json`: checks the genesis and the master key against `venue.json`, or,
 * at the first start, creates the master key (at its default place, unless one is given) and
 * records `venue.json`. Throws a StartRefusedError saying what to do for an edited genesis, a
 * missing master key, or a key that does not open this venue.
 */
export function openVenue(root: string, genesis: VenueConfig, options: OpenVenueOptions): OpenedVenue {
  const env = options.env ?? process.env;
  const recorded = readVenueIdentity(root);
  if (recorded !== undefined) checkGenesis(root, recorded, genesis);
  const venueId = recorded?.venueId ?? randomBytes(16).toString('hex');
  const defaultFile = defaultMasterKeyFile(venueId, env);
  const fromEnv = env[MASTER_KEY_ENV] !== undefined && env[MASTER_KEY_ENV] !== '';
  const keyFile = options.masterKeyFile ?? (fromEnv ? undefined : defaultFile);
  const howToGive =
    `name it with --master-key-file or BOURSE_MASTER_KEY_FILE (or give it as 64 hex digits in ${MASTER_KEY_ENV}); ` +
    `without either the key is read from ${defaultFile}`;

  if (keyFile !== undefined && !existsSync(keyFile)) {
    if (options.masterKeyFile !== undefined) {
      throw new StartRefusedError(`the master key file ${resolve(keyFile)} does not exist: ${howToGive}`);
    }
    if (recorded !== undefined) {
      throw new StartRefusedError(
        `no master key at ${keyFile}: this venue's API secrets are sealed with master key ${recorded.masterKeyId}. ` +
          `Copy that key file there (a moved or restored venue needs the key file from its old place), or ${howToGive}`,
      );
    }
    mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
    const legacy = legacyMasterKeyFile(root, env);
    if (hasData(root) && existsSync(legacy)) {
      copyFileSync(legacy, keyFile);
      options.info(
        `master key ${legacy} copied to ${keyFile}, its place from now on (named by the venue's id)`,
      );
    } else {
      writeMasterKeyFile(keyFile);
      options.warn(
        `created the master key ${keyFile} (outside the data directory: back it up with the data directory, it opens the API secrets)`,
      );
    }
  }
  let masterKey: Buffer;
  try {
    masterKey = loadMasterKey({ keyFile, env, dataDir: root, warn: options.warn });
  } catch (error) {
    throw new StartRefusedError(`${(error as Error).message}; ${howToGive}`);
  }
  const keyId = masterKeyId(masterKey);
  if (recorded !== undefined) {
    if (keyId !== recorded.masterKeyId) {
      const source = keyFile ?? MASTER_KEY_ENV;
      throw new StartRefusedError(
        `the master key from ${source} (key id ${keyId}) does not open this data directory: its API secrets are ` +
          `sealed with master key ${recorded.masterKeyId}. Give that key: ${howToGive}`,
      );
    }
    return { identity: recorded, masterKey };
  }
  const identity: VenueIdentity = {
    format: VENUE_FORMAT,
    version: VENUE_FORMAT_VERSION,
    venueId,
    createdAt: new Date().toISOString(),
    genesisHash: genesisHash(genesis),
    masterKeyId: keyId,
    genesis,
  };
  writeAtomic(join(root, VENUE_FILE), `${JSON.stringify(identity, null, 2)}\n`, FILE_MODE);
  options.info(
    `venue ${venueId} recorded in ${join(root, VENUE_FILE)} (genesis ${identity.genesisHash.slice(0, 16)}…, master key ${keyId})`,
  );
  return { identity, masterKey };
}
