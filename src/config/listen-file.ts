/**
 * @module listen-file — where a running server listens (public and admin addresses, pid), written
 * into its data directory as `listen.json` so that the `bourse` CLI finds the server by itself.
 *
 * The file is written atomically, mode 0600, once both listeners are bound, and removed on a clean
 * stop. A file whose server is gone (kill -9, a crash) stays behind: readers check the pid and the
 * instance id before trusting it (docs/operations.md, "The CLI: finding the server").
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { writeAtomic } from './data-dir.ts';

export const LISTEN_FILE = 'listen.json';

/** A TCP listener: the interface and port bound, and the URL a client on this machine uses. */
export interface TcpEndpoint {
  readonly host: string;
  readonly port: number;
  readonly url: string;
}

/** A Unix-socket listener (the admin API with `--admin-socket`). */
export interface SocketEndpoint {
  readonly socket: string;
}

export type Endpoint = TcpEndpoint | SocketEndpoint;

export interface ListenRecord {
  /** The server's process id. */
  readonly pid: number;
  /** Random per start: the admin API answers it at `/admin/instance`, so a stale file is detected even when the pid and the port were reused. */
  readonly instance: string;
  /** ISO time of the start. */
  readonly startedAt: string;
  readonly public: TcpEndpoint;
  readonly admin: Endpoint;
}

/** A fresh instance id (128 random bits, hex). */
export const newInstanceId = (): string => randomBytes(16).toString('hex');

/**
 * The URL a client on this machine uses for a listener on `host:port`: a wildcard interface
 * (`0.0.0.0`, `::`) is reached on loopback; IPv6 addresses are bracketed.
 */
export function localUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${isIP(reachable) === 6 ? `[${reachable}]` : reachable}:${port}`;
}

export const tcpEndpoint = (host: string, port: number): TcpEndpoint => ({
  host,
  port,
  url: localUrl(host, port),
});

/** Writes `<root>/listen.json` atomically, readable by the owner only. */
export function writeListenFile(root: string, record: ListenRecord): void {
  writeAtomic(join(root, LISTEN_FILE), `${JSON.stringify(record, null, 2)}\n`, 0o600);
}

/** Removes `<root>/listen.json` if it is still the one of `instance` (never another server's). */
export function removeListenFile(root: string, instance: string): void {
  try {
    if (readListenFile(root)?.instance === instance) rmSync(join(root, LISTEN_FILE), { force: true });
  } catch {
    // Unreadable: not ours to remove.
  }
}

/**
 * Reads `<root>/listen.json`: undefined when there is none; throws an Error naming the file when
 * it cannot be read or is not a listen record.
 */
export function readListenFile(root: string): ListenRecord | undefined {
  const path = join(root, LISTEN_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON: delete it if no server runs on this data directory`);
  }
  if (!isListenRecord(value)) {
    throw new Error(`${path} is not a listen record: delete it if no server runs on this data directory`);
  }
  return value;
}

function isTcp(x: unknown): x is TcpEndpoint {
  const e = x as Partial<TcpEndpoint> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.host === 'string' &&
    Number.isInteger(e.port) &&
    typeof e.url === 'string' &&
    /^http:\/\/[^/?#]+$/.test(e.url)
  );
}

function isListenRecord(x: unknown): x is ListenRecord {
  const r = x as Partial<ListenRecord> | null;
  if (typeof r !== 'object' || r === null) return false;
  const admin = r.admin as Partial<SocketEndpoint> | undefined;
  return (
    Number.isSafeInteger(r.pid) &&
    (r.pid as number) > 0 &&
    typeof r.instance === 'string' &&
    typeof r.startedAt === 'string' &&
    isTcp(r.public) &&
    (isTcp(admin) || (typeof admin === 'object' && admin !== null && typeof admin.socket === 'string'))
  );
}
