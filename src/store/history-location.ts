/**
 * @module history-location — where the history store lives (an SQLite file or a PostgreSQL URL),
 * as plain data that a worker thread can be handed, and the one function that opens it.
 */
import type { HistoryStore } from './history-store.ts';
import { PgHistoryStore, redactUrl, type PgHistoryStoreOptions } from './pg-history-store.ts';
import { SqliteHistoryStore, type SqliteHistoryStoreOptions } from './sqlite-history-store.ts';

export type HistoryLocation =
  | { readonly kind: 'sqlite'; readonly path: string; readonly options?: SqliteHistoryStoreOptions }
  | {
      readonly kind: 'postgres';
      /** postgres://user@host:port/database, optionally `?schema=name`. */
      readonly url: string;
      /** Without `log` (a function does not cross to a worker thread). */
      readonly options?: Omit<PgHistoryStoreOptions, 'log'>;
    };

/** PostgreSQL when `url` is given (`--history-url`), else the SQLite file at `sqlitePath`. */
export function historyLocation(url: string | undefined, sqlitePath: string): HistoryLocation {
  return url === undefined ? { kind: 'sqlite', path: sqlitePath } : { kind: 'postgres', url };
}

/**
 * The page cache (KiB) of an SQLite connection that only reads: the venue's own queries (order
 * pages, klines, trades) touch the recent rows of a few indexes. The writer keeps
 * SqliteHistoryStore's 64 MiB (docs/history-store.md, "Durability and settings"). Each
 * connection's cache fills as the file grows and is kept for the connection's life: memory the
 * process holds for good, outside the JavaScript heap (issue 30, bench/README.md, "Failover and soak").
 */
export const READER_CACHE_KIB = 8_192;

/** `location` for a connection that only reads: SQLite with READER_CACHE_KIB (PostgreSQL as it is). */
export function readerLocation(location: HistoryLocation): HistoryLocation {
  return location.kind === 'sqlite'
    ? { ...location, options: { cacheKiB: READER_CACHE_KIB, ...location.options } }
    : location;
}

/** Opens (creating and migrating if needed) the store at `location`. */
export async function openHistoryStore(
  location: HistoryLocation,
  log?: (message: string) => void,
): Promise<HistoryStore> {
  return location.kind === 'sqlite'
    ? SqliteHistoryStore.open(location.path, location.options)
    : PgHistoryStore.open(location.url, { ...location.options, ...(log === undefined ? {} : { log }) });
}

/** The location for logs (a PostgreSQL password is not shown). */
export function describeHistoryLocation(location: HistoryLocation): string {
  return location.kind === 'sqlite' ? `SQLite ${location.path}` : `PostgreSQL ${redactUrl(location.url)}`;
}
