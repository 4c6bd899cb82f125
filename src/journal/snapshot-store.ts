/**
 * @module snapshot-store — atomic, checksummed snapshot files of engine state in one directory
 * (format in docs/journal-format.md).
 *
 * A snapshot is written to a temp file, fsynced, renamed into place and the directory fsynced,
 * so a crash leaves either the previous set of snapshots or the new one, plus at worst a temp
 * file that readers ignore. Large states are serialized in chunks (a top-level array property
 * becomes many lines), so neither writing nor reading builds one giant string.
 */
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { Log } from '../domain/log.ts';

export const SNAPSHOT_FORMAT = 'bourse-snapshot';
/** Layout version in each header; a change of layout bumps it. */
export const SNAPSHOT_FORMAT_VERSION = 1;
/** The header is one JSON line padded with spaces to this size (newline included). */
export const SNAPSHOT_HEADER_BYTES = 256;
/** Elements of a top-level array property per body line. Each line costs one JSON.stringify. */
export const SNAPSHOT_ARRAY_CHUNK_ELEMENTS = 1024;
/** Serialized text gathered before each write call while writing a snapshot. */
const WRITE_CHUNK_BYTES = 256 * 1024;
/** Read size when verifying a checksum without loading the snapshot. */
const VERIFY_READ_BYTES = 8 * 1024 * 1024;
const SNAPSHOT_NAME = /^snapshot-(\d{20})\.snap$/;
const TEMP_SUFFIX = '.tmp';
const NEWLINE = 0x0a;

export interface SnapshotStoreOptions {
  /**
   * Told about every snapshot or temp file that `latestValid` skips (corrupt, truncated,
   * leftover from a crash). Defaults to ignoring them.
   */
  readonly onProblem?: (problem: string) => void;
}

/** A snapshot file by name, not yet verified. */
export interface SnapshotEntry {
  readonly path: string;
  readonly lastSeq: number;
}

/** A snapshot that verified and parsed. */
export interface LoadedSnapshot {
  readonly path: string;
  readonly lastSeq: number;
  readonly stateHash: string;
  readonly state: unknown;
}

interface SnapshotHeader {
  readonly lastSeq: number;
  readonly stateHash: string;
  readonly bodyBytes: number;
  readonly bodyCrc32: number;
}

/** The file's content is not a valid snapshot (as opposed to an I/O error reading it). */
class InvalidSnapshot extends Error {}

/** Snapshots of one directory: `snapshot-<lastSeq, 20 digits>.snap`. */
export class SnapshotStore {
  readonly dir: string;
  readonly #onProblem: (problem: string) => void;
  /** Temp files this store is writing right now: not leftovers, never pruned. */
  readonly #writing = new Set<string>();
  #tempCounter = 0;

  /** A venue's store at `dir`: problems logged at warn, and the leftovers of a snapshot cut short removed (and said). */
  static openForVenue(dir: string, log: Log): SnapshotStore {
    const store = new SnapshotStore(dir, { onProblem: (p) => log.warn(p) });
    for (const file of store.removeLeftovers())
      log.info({ path: file }, `removed ${file}, left by a snapshot cut short`);
    return store;
  }

  /** The newest snapshot's seq and file time (ms), for the operator's views; undefined without one. */
  newest(): { seq: number; at: number | undefined } | undefined {
    const newest = this.list()[0];
    if (newest === undefined) return undefined;
    const mtime = fs.statSync(newest.path, { throwIfNoEntry: false })?.mtimeMs;
    return { seq: newest.lastSeq, at: mtime === undefined ? undefined : Math.round(mtime) };
  }

  constructor(dir: string, options: SnapshotStoreOptions = {}) {
    this.dir = dir;
    this.#onProblem = options.onProblem ?? (() => undefined);
    fs.mkdirSync(dir, { recursive: true });
  }

  /**
   * Writes `state` (any JSON-able value; `JSON.stringify` semantics) atomically as the snapshot
   * for `meta.lastSeq`, replacing one with the same lastSeq. Resolves with its path once it is
   * durable (file and directory entry fsynced). `state` must not change until then: it is
   * serialized in chunks between writes, yielding to the event loop.
   */
  async write(state: unknown, meta: { lastSeq: number; stateHash: string }): Promise<string> {
    const { lastSeq, stateHash } = meta;
    if (!Number.isSafeInteger(lastSeq) || lastSeq < 0) throw new RangeError(`snapshot lastSeq ${lastSeq}`);
    // Fail before any I/O if the header cannot fit, whatever the body size turns out to be.
    encodeHeader({ lastSeq, stateHash, bodyBytes: Number.MAX_SAFE_INTEGER, bodyCrc32: 0xffffffff });
    const finalPath = path.join(this.dir, snapshotName(lastSeq));
    const tempName = `${snapshotName(lastSeq)}.${process.pid}-${++this.#tempCounter}${TEMP_SUFFIX}`;
    const tempPath = path.join(this.dir, tempName);
    this.#writing.add(tempName);
    try {
      const handle = await fs.promises.open(tempPath, 'wx');
      try {
        let position = SNAPSHOT_HEADER_BYTES;
        let bodyCrc32 = 0;
        let text = '';
        const flush = async (): Promise<void> => {
          const bytes = Buffer.from(text, 'utf8');
          text = '';
          bodyCrc32 = crc32(bytes, bodyCrc32);
          await writeFully(handle, bytes, position);
          position += bytes.length;
        };
        for (const line of bodyLines(state)) {
          text += line;
          if (text.length >= WRITE_CHUNK_BYTES) await flush();
        }
        if (text.length > 0) await flush();
        const bodyBytes = position - SNAPSHOT_HEADER_BYTES;
        await writeFully(handle, encodeHeader({ lastSeq, stateHash, bodyBytes, bodyCrc32 }), 0);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.promises.rename(tempPath, finalPath);
      await fsyncDir(this.dir);
      return finalPath;
    } catch (error) {
      await fs.promises.rm(tempPath, { force: true });
      throw error;
    } finally {
      this.#writing.delete(tempName);
    }
  }

  /** Snapshot files by name, newest (highest lastSeq) first; not verified. */
  list(): SnapshotEntry[] {
    const entries: SnapshotEntry[] = [];
    for (const name of fs.readdirSync(this.dir)) {
      const match = SNAPSHOT_NAME.exec(name);
      if (match !== null) entries.push({ path: path.join(this.dir, name), lastSeq: Number(match[1]) });
    }
    return entries.sort((a, b) => b.lastSeq - a.lastSeq);
  }

  /**
   * The newest snapshot whose header and checksum verify and whose body parses, or undefined.
   * Every snapshot skipped on the way and every leftover temp file is told to `onProblem`.
   */
  latestValid(): LoadedSnapshot | undefined {
    for (const problem of this.#leftoverTemps()) this.#onProblem(problem);
    for (const entry of this.list()) {
      try {
        return loadSnapshot(entry);
      } catch (error) {
        this.#onProblem(`snapshot ${entry.path} skipped: ${(error as Error).message}`);
      }
    }
    return undefined;
  }

  /**
   * Loads one snapshot file (a path from `list()`), verifying header, size and checksum and
   * parsing the body. Throws an Error saying what is wrong when it does not verify.
   */
  load(file: string): LoadedSnapshot {
    const match = SNAPSHOT_NAME.exec(path.basename(file));
    if (match === null) throw new Error(`${file} is not named like a snapshot (snapshot-<20 digits>.snap)`);
    return loadSnapshot({ path: file, lastSeq: Number(match[1]) });
  }

  /**
   * Checks the header and body checksum of every snapshot (without parsing bodies). Returns one
   * line per problem; empty when all is well. Leftover temp files are not problems (a snapshot
   * cut short by a kill); `removeLeftovers` deletes them.
   */
  verifyAll(): string[] {
    const problems: string[] = [];
    for (const entry of this.list()) {
      try {
        verifySnapshot(entry);
      } catch (error) {
        problems.push(`snapshot ${entry.path}: ${(error as Error).message}`);
      }
    }
    return problems;
  }

  /**
   * Deletes the temp files a snapshot write cut short by a kill or crash left behind (never one
   * this store is writing). Call it only while no other process writes snapshots here (the data
   * directory's lock). Returns the paths deleted.
   */
  removeLeftovers(): string[] {
    const removed: string[] = [];
    for (const name of this.#tempNames()) {
      const file = path.join(this.dir, name);
      fs.rmSync(file, { force: true });
      removed.push(file);
    }
    return removed;
  }

  /**
   * Retention: keeps the `keep` newest snapshots that verify and deletes every other snapshot
   * file (older ones, invalid ones) and leftover temp files. A file that cannot be read (an I/O
   * error rather than bad content) is neither kept nor deleted. Returns the paths deleted.
   * Synchronous: it reads every snapshot through to check its checksum (about 50 ms per
   * 155 MB measured here).
   */
  prune(keep = 2): string[] {
    const removed: string[] = [];
    let kept = 0;
    for (const entry of this.list()) {
      let valid: boolean;
      try {
        verifySnapshot(entry);
        valid = true;
      } catch (error) {
        if (!(error instanceof InvalidSnapshot)) continue;
        valid = false;
      }
      if (valid && kept < keep) {
        kept++;
        continue;
      }
      fs.rmSync(entry.path, { force: true });
      removed.push(entry.path);
    }
    removed.push(...this.removeLeftovers());
    // No directory fsync: if a crash forgets a deletion, the file comes back whole and the next
    // prune deletes it again, and the event loop is spared a synchronous fsync.
    return removed;
  }

  /** Temp files not being written by this store: what a crash mid-write left behind. */
  #tempNames(): string[] {
    return fs
      .readdirSync(this.dir)
      .filter(
        (name) => name.startsWith('snapshot-') && name.endsWith(TEMP_SUFFIX) && !this.#writing.has(name),
      );
  }

  #leftoverTemps(): string[] {
    return this.#tempNames().map((name) => `leftover temp file ${path.join(this.dir, name)} ignored`);
  }
}

function snapshotName(lastSeq: number): string {
  return `snapshot-${String(lastSeq).padStart(20, '0')}.snap`;
}

function headerFields(h: SnapshotHeader): string {
  return JSON.stringify([
    SNAPSHOT_FORMAT,
    SNAPSHOT_FORMAT_VERSION,
    h.lastSeq,
    h.stateHash,
    h.bodyBytes,
    h.bodyCrc32,
  ]);
}

function encodeHeader(h: SnapshotHeader): Buffer {
  const json = JSON.stringify({
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_FORMAT_VERSION,
    lastSeq: h.lastSeq,
    stateHash: h.stateHash,
    bodyBytes: h.bodyBytes,
    bodyCrc32: h.bodyCrc32,
    headerCrc32: crc32(headerFields(h)),
  });
  const bytes = Buffer.byteLength(json);
  if (bytes > SNAPSHOT_HEADER_BYTES - 1) {
    throw new RangeError(`snapshot header too long (${bytes} bytes): stateHash is too long`);
  }
  const header = Buffer.alloc(SNAPSHOT_HEADER_BYTES, ' ');
  header.write(json, 0, 'utf8');
  header[SNAPSHOT_HEADER_BYTES - 1] = NEWLINE;
  return header;
}

function decodeHeader(header: Buffer, entry: SnapshotEntry): SnapshotHeader {
  if (header.length < SNAPSHOT_HEADER_BYTES) {
    throw new InvalidSnapshot(`truncated: ${header.length} bytes, shorter than the header`);
  }
  if (header[SNAPSHOT_HEADER_BYTES - 1] !== NEWLINE) throw new InvalidSnapshot('bad header: no newline');
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(header.toString('utf8', 0, SNAPSHOT_HEADER_BYTES - 1)) as Record<string, unknown>;
  } catch {
    throw new InvalidSnapshot('bad header: not JSON');
  }
  const { format, version, lastSeq, stateHash, bodyBytes, bodyCrc32, headerCrc32 } = parsed;
  if (format !== SNAPSHOT_FORMAT) throw new InvalidSnapshot(`bad header: format ${String(format)}`);
  if (version !== SNAPSHOT_FORMAT_VERSION)
    throw new InvalidSnapshot(`unsupported version ${String(version)}`);
  if (
    typeof lastSeq !== 'number' ||
    typeof stateHash !== 'string' ||
    typeof bodyBytes !== 'number' ||
    typeof bodyCrc32 !== 'number'
  ) {
    throw new InvalidSnapshot('bad header: missing fields');
  }
  const h: SnapshotHeader = { lastSeq, stateHash, bodyBytes, bodyCrc32 };
  if (headerCrc32 !== crc32(headerFields(h))) throw new InvalidSnapshot('header checksum mismatch');
  if (lastSeq !== entry.lastSeq) {
    throw new InvalidSnapshot(`header says lastSeq ${lastSeq}, the file name ${entry.lastSeq}`);
  }
  return h;
}

function checkSize(size: number, h: SnapshotHeader): void {
  const expected = SNAPSHOT_HEADER_BYTES + h.bodyBytes;
  if (size < expected) throw new InvalidSnapshot(`truncated: ${size} of ${expected} bytes`);
  if (size > expected) throw new InvalidSnapshot(`${size - expected} unexpected bytes after the body`);
}

/** Verifies header, size and body checksum, reading in chunks; throws InvalidSnapshot or an I/O error. */
function verifySnapshot(entry: SnapshotEntry): SnapshotHeader {
  const fd = fs.openSync(entry.path, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const headerBytes = Buffer.alloc(Math.min(size, SNAPSHOT_HEADER_BYTES));
    fs.readSync(fd, headerBytes, 0, headerBytes.length, 0);
    const h = decodeHeader(headerBytes, entry);
    checkSize(size, h);
    const chunk = Buffer.allocUnsafe(Math.min(VERIFY_READ_BYTES, Math.max(h.bodyBytes, 1)));
    let crc = 0;
    for (let position = SNAPSHOT_HEADER_BYTES; position < size;) {
      const n = fs.readSync(fd, chunk, 0, Math.min(chunk.length, size - position), position);
      if (n === 0) throw new InvalidSnapshot('file shrank while being read');
      crc = crc32(chunk.subarray(0, n), crc);
      position += n;
    }
    if (crc !== h.bodyCrc32) throw new InvalidSnapshot('body checksum mismatch');
    return h;
  } finally {
    fs.closeSync(fd);
  }
}

function loadSnapshot(entry: SnapshotEntry): LoadedSnapshot {
  const data = fs.readFileSync(entry.path);
  const h = decodeHeader(data.subarray(0, SNAPSHOT_HEADER_BYTES), entry);
  checkSize(data.length, h);
  const body = data.subarray(SNAPSHOT_HEADER_BYTES);
  if (crc32(body) !== h.bodyCrc32) throw new InvalidSnapshot('body checksum mismatch');
  return { path: entry.path, lastSeq: h.lastSeq, stateHash: h.stateHash, state: parseBody(body) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
}

/**
 * The body as newline-terminated JSON lines. A plain-object state becomes one line per
 * property, `["=",key,value]`, except that an array longer than a chunk becomes several
 * `["+",key,[elements…]]` lines; any other state is a single `["$",value]` line.
 */
function* bodyLines(state: unknown): Generator<string> {
  if (!isPlainObject(state)) {
    const json = JSON.stringify(['$', state]);
    if (json === undefined) throw new TypeError('snapshot state is not JSON-able');
    yield json + '\n';
    return;
  }
  for (const key of Object.keys(state)) {
    const value = state[key];
    if (Array.isArray(value) && value.length > SNAPSHOT_ARRAY_CHUNK_ELEMENTS) {
      for (let i = 0; i < value.length; i += SNAPSHOT_ARRAY_CHUNK_ELEMENTS) {
        yield JSON.stringify(['+', key, value.slice(i, i + SNAPSHOT_ARRAY_CHUNK_ELEMENTS)]) + '\n';
      }
    } else if (value !== undefined && typeof value !== 'function' && typeof value !== 'symbol') {
      yield JSON.stringify(['=', key, value]) + '\n';
    }
  }
}

function parseBody(body: Buffer): unknown {
  let state: Record<string, unknown> | undefined;
  let whole: { value: unknown } | undefined;
  for (let start = 0; start < body.length;) {
    const end = body.indexOf(NEWLINE, start);
    if (end < 0) throw new InvalidSnapshot(`body line at byte ${start} has no newline`);
    let line: unknown;
    try {
      line = JSON.parse(body.toString('utf8', start, end));
    } catch {
      throw new InvalidSnapshot(`body line at byte ${start} is not JSON`);
    }
    start = end + 1;
    if (!Array.isArray(line)) throw new InvalidSnapshot('body line is not an array');
    const [tag, key, value] = line as [unknown, unknown, unknown];
    if (tag === '$' && whole === undefined && state === undefined) {
      whole = { value: key };
      continue;
    }
    if ((tag !== '=' && tag !== '+') || typeof key !== 'string' || whole !== undefined) {
      throw new InvalidSnapshot('body line has an unknown shape');
    }
    state ??= {};
    if (tag === '=') {
      defineProperty(state, key, value);
    } else {
      if (!Array.isArray(value)) throw new InvalidSnapshot('array chunk is not an array');
      const existing = Object.hasOwn(state, key) ? state[key] : undefined;
      if (existing === undefined) defineProperty(state, key, value);
      else if (Array.isArray(existing)) for (const element of value) existing.push(element);
      else throw new InvalidSnapshot(`array chunk for non-array property ${key}`);
    }
  }
  if (whole !== undefined) return whole.value;
  return state ?? {};
}

/** Sets an own property, even one named `__proto__`, as JSON.parse would. */
function defineProperty(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Makes the directory entry of a renamed file durable, off the event loop. */
async function fsyncDir(dir: string): Promise<void> {
  const handle = await fs.promises.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function writeFully(handle: fs.promises.FileHandle, bytes: Buffer, position: number): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    if (bytesWritten === 0) throw new Error('write made no progress');
    done += bytesWritten;
  }
}
