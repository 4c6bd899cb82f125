/**
 * @module jetstream-journal — the journal on a NATS JetStream stream (the scale-out adapter of
 * JournalPort; docs/scale-out.md, "The journal on JetStream", has the format and the reasons).
 *
 * Group commit on the client: the records appended in one event-loop turn (up to
 * `maxBatchBytes`) travel as one message, its body the records' payloads each behind a u32
 * length, its `Bourse-Seq: <first>-<last>` header their journal sequence numbers. A server with
 * `sync_interval: always` fsyncs every message before acknowledging it, so one message per
 * record would be one fsync per record (about 400–600 records/s measured here); one message per
 * batch shares the fsync. Up to `maxBatchesInFlight` messages are published without waiting
 * (pipelined); while that many wait for their acknowledgement, appends gather in the next batch.
 *
 * The stream captures `<subject>.*`; each writer (each `open`) publishes on a subject of its own,
 * `<subject>.<writer id>`. Every message carries
 * - `Nats-Expected-Last-Sequence` (the stream sequence of the message before it) and
 *   `Nats-Expected-Last-Subject-Sequence` (this writer's previous message, 0 for its first): the
 *   stream stores a message only when the last one in the stream is this writer's previous one.
 *   A deposed writer that wakes up is refused and never forks the journal: its first message is
 *   refused because another writer has appended since, and each later one because its
 *   predecessor is not in the stream, even when the stream sequences line up again (the expected
 *   sequence alone would let the old writer's pipelined message `n + m` in after `m` messages of
 *   the new one);
 * - `Nats-Msg-Id: <writer id>-<first seq>`: a re-publish after a reconnect is acknowledged as a
 *   duplicate inside the stream's duplicate window instead of being stored twice. The server
 *   checks the id *before* the expected sequences, so the id must name the writer: another
 *   writer's batch at the same sequence must not pass for this one's.
 * A record is durable once its message is acknowledged with every message before it; the
 * watermark advances once per burst of acknowledgements.
 *
 * An acknowledgement means "on disk" only when the server fsyncs every write: `open` reads each
 * server's JetStream configuration from its monitoring endpoint (`/varz`,
 * `jetstream.config.sync_always`, which nats-server 2.10+ reports for `sync_interval: always`)
 * and refuses a server that does not.
 */
import { randomUUID } from 'node:crypto';
import {
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
  type StreamInfo,
} from '@nats-io/jetstream';
import {
  connect,
  createInbox,
  headers,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';
import type { JournalRecord } from '../sequencer/ports.ts';
import { DurabilityReports, JournalFailedError } from './durability.ts';

/** JetStream's error code for a failed Nats-Expected-Last-(Subject-)Sequence check. */
const WRONG_LAST_SEQUENCE = 10071;
const NANOS_PER_MS = 1_000_000;
/** The header naming the journal sequence numbers a message carries: `<first>-<last>`. */
export const SEQ_HEADER = 'Bourse-Seq';
/**
 * The header naming the request ids of the message's records that have one (commands from the
 * gateways): `<offset>:<id>` pairs separated by spaces, the offset from the first record.
 */
export const TAGS_HEADER = 'Bourse-Ids';
/** What a record's tag (a request id) may be: it travels in a header, space-separated. */
export const TAG_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** Bytes of each record's length prefix in a message body. */
const LENGTH_BYTES = 4;
/** Room left under the server's max_payload for the headers (which count towards it). */
const HEADER_ROOM_BYTES = 512;
/** How many bytes of messages a read asks the server for ahead of what it has yielded. */
const READ_AHEAD_BYTES = 32 * 1024 * 1024;

export interface JetStreamJournalOptions {
  /** NATS server URLs (nats://host:port). */
  readonly servers: string | readonly string[];
  /**
   * Monitoring endpoints (http://host:port) of every server that stores the stream: each must
   * report `sync_always` or the journal refuses to open.
   */
  readonly monitorUrls: string | readonly string[];
  /** Stream name (default BOURSE_JOURNAL). */
  readonly stream?: string;
  /** The stream captures `<subject>.*`, one subject per writer (default bourse.journal). */
  readonly subject?: string;
  /** Replicas when the stream is created (default 1; 3 in production, see docs/scale-out.md). */
  readonly replicas?: number;
  /** The stream's duplicate window when it is created (default 2 minutes). */
  readonly duplicateWindowMs?: number;
  /** A message not acknowledged this long after its (last) publish fails the journal (default 10 s). */
  readonly ackTimeoutMs?: number;
  /** Largest message body (default 1 MiB, and never above the server's max_payload less room for headers). */
  readonly maxBatchBytes?: number;
  /** Messages published and not yet acknowledged at most (default 2); appends gather meanwhile. */
  readonly maxBatchesInFlight?: number;
  /** Diagnostics (reconnects, retention). */
  readonly log?: (message: string) => void;
  /**
   * Fence the stream at open (default false): publish an empty message expecting the stream's
   * last one, so that every writer that opened before this one is refused from here on. `open`
   * rejects with JournalContendedError when another writer appended in between (open again).
   */
  readonly fence?: boolean;
}

/** Another writer appended while this one opened (its fence was refused): open again. */
export class JournalContendedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JournalContendedError';
  }
}

/** The server would acknowledge records that are not on disk yet. */
export class JournalUnsafeServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JournalUnsafeServerError';
  }
}

/** Records gathered into one message. */
interface Batch {
  buf: Buffer;
  used: number;
  /** The `Bourse-Ids` header's value being built, and its bytes (they count towards the message's size). */
  tags: string;
  readonly firstSeq: number;
  lastSeq: number;
  /** Set when published: its stream sequence, headers and the time of its (last) publish. */
  streamSeq: number;
  headers: MsgHdrs | null;
  sentAt: number;
  acked: boolean;
}

interface PubAck {
  readonly stream?: string;
  readonly seq?: number;
  readonly duplicate?: boolean;
  readonly error?: { readonly code?: number; readonly err_code?: number; readonly description?: string };
}

const asList = (value: string | readonly string[]): string[] =>
  typeof value === 'string' ? [value] : [...value];

/**
 * The journal sequence numbers a stored message carries, from its `Bourse-Seq` header. A fence
 * (a writer's first message, `open({ fence: true })`) carries none: `last` is `first - 1`.
 */
export function batchRange(hdrs: MsgHdrs | undefined, streamSeq: number): { first: number; last: number } {
  const m = /^(\d+)-(\d+)$/.exec(hdrs?.get(SEQ_HEADER) ?? '');
  const first = Number(m?.[1]);
  const last = Number(m?.[2]);
  if (m === null || !Number.isSafeInteger(first) || !(last >= first - 1)) {
    throw new Error(`stream message ${streamSeq} has no valid ${SEQ_HEADER} header: not a journal batch`);
  }
  return { first, last };
}

/** The request ids of a message's records, by journal seq, from its `Bourse-Ids` header. */
export function batchTags(hdrs: MsgHdrs | undefined, first: number): Map<number, string> {
  const tags = new Map<number, string>();
  const value = hdrs?.get(TAGS_HEADER) ?? '';
  if (value === '') return tags;
  for (const pair of value.split(' ')) {
    const colon = pair.indexOf(':');
    const offset = Number(pair.slice(0, colon));
    if (colon > 0 && Number.isSafeInteger(offset)) tags.set(first + offset, pair.slice(colon + 1));
  }
  return tags;
}

/**
 * The records of a message body: each a u32 (little-endian) length and that many bytes, with its
 * tag (request id) when `tags` has one.
 */
export function* batchRecords(
  data: Uint8Array,
  first: number,
  last: number,
  tags?: ReadonlyMap<number, string>,
): Generator<JournalRecord> {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  for (let seq = first; seq <= last; seq++) {
    if (at + LENGTH_BYTES > data.byteLength)
      throw new Error(`journal batch ${first}-${last}: record ${seq} missing`);
    const length = view.getUint32(at, true);
    const start = at + LENGTH_BYTES;
    if (start + length > data.byteLength)
      throw new Error(`journal batch ${first}-${last}: record ${seq} cut short`);
    const tag = tags?.get(seq);
    const payload = data.subarray(start, start + length);
    yield tag === undefined ? { seq, payload } : { seq, payload, tag };
    at = start + length;
  }
  if (at !== data.byteLength)
    throw new Error(`journal batch ${first}-${last}: ${data.byteLength - at} bytes left over`);
}

/**
 * Reads each server's JetStream settings from its monitoring endpoint and throws
 * `JournalUnsafeServerError` unless every one fsyncs each write (`sync_interval: always`).
 */
export async function checkServerSync(monitorUrls: readonly string[]): Promise<void> {
  if (monitorUrls.length === 0) {
    throw new JournalUnsafeServerError(
      'the JetStream journal needs the monitoring endpoint of each NATS server (http://host:8222) to check that it fsyncs every write',
    );
  }
  for (const base of monitorUrls) {
    const url = `${base.replace(/\/+$/, '')}/varz`;
    let varz: {
      version?: string;
      jetstream?: { config?: { sync_always?: boolean; sync_interval?: number } };
    };
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      varz = (await response.json()) as typeof varz;
    } catch (error) {
      throw new JournalUnsafeServerError(
        `cannot read ${url} to check the NATS server's sync setting (${(error as Error).message}); the journal does not start on a server it cannot check`,
      );
    }
    const config = varz.jetstream?.config;
    if (config === undefined) {
      throw new JournalUnsafeServerError(
        `the NATS server at ${base} (${varz.version ?? '?'}) has JetStream disabled`,
      );
    }
    if (config.sync_always !== true) {
      const interval =
        config.sync_interval === undefined
          ? 'not reported (a server older than 2.10?)'
          : `${config.sync_interval / 1e9} s`;
      throw new JournalUnsafeServerError(
        `the NATS server at ${base} (${varz.version ?? '?'}) does not fsync each JetStream write (sync interval ${interval}): ` +
          'an acknowledged command could be lost in a power cut. Start it with `jetstream { sync_interval: always }`.',
      );
    }
  }
}

/**
 * A journal over one JetStream stream. One writer at a time (others are refused, see the module
 * comment). Not reentrant from listeners: listeners may call `append`.
 */
export class JetStreamJournal {
  readonly stream: string;
  /** The subject this writer publishes on: `<subject>.<writer id>`. */
  readonly subject: string;
  /** What the stream captures: `<subject>.*`. */
  readonly #streamSubjects: string;
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #writerId = randomUUID().slice(0, 8);
  readonly #inbox: string;
  readonly #acks: Subscription;
  readonly #ackTimeoutMs: number;
  readonly #maxBatchBytes: number;
  readonly #maxInFlight: number;
  readonly #log: (message: string) => void;
  #firstSeq: number;
  #lastSeq: number;
  #durableSeq: number;
  /** Stream sequence of the last message published (by anyone, when this writer opened). */
  #lastStreamSeq: number;
  /** Stream sequence of this writer's first message: the first on its subject. */
  readonly #firstOwnStreamSeq: number;
  #open: Batch | null = null;
  #openDue = false;
  readonly #sealed: Batch[] = [];
  /** Published, oldest first, until acknowledged with every one before it. */
  readonly #inFlight: Batch[] = [];
  #immediate: NodeJS.Immediate | null = null;
  #notifyScheduled = false;
  readonly #watchdog: NodeJS.Timeout;
  #failure: JournalFailedError | null = null;
  /** The fence published by `open`, until it is acknowledged or refused. */
  #fencing: { batch: Batch; resolve: () => void; reject: (error: Error) => void } | null = null;
  #closing: Promise<void> | null = null;
  /** Retention's purges, one after the other; close waits for them. */
  #purging: Promise<void> = Promise.resolve();
  readonly #reports = new DurabilityReports();
  /** Message bodies published (not counting re-publishes), for metrics. */
  #bytesPublished = 0;

  private constructor(
    nc: NatsConnection,
    jsm: JetStreamManager,
    info: StreamInfo,
    range: { firstSeq: number; lastSeq: number },
    subject: string,
    options: JetStreamJournalOptions,
  ) {
    this.#nc = nc;
    this.#jsm = jsm;
    this.stream = info.config.name;
    this.#streamSubjects = `${subject}.*`;
    this.subject = `${subject}.${this.#writerId}`;
    this.#ackTimeoutMs = options.ackTimeoutMs ?? 10_000;
    const maxPayload = (nc.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM_BYTES;
    this.#maxBatchBytes = Math.min(options.maxBatchBytes ?? 1024 * 1024, maxPayload);
    this.#maxInFlight = options.maxBatchesInFlight ?? 2;
    if (!(Number.isInteger(this.#maxInFlight) && this.#maxInFlight >= 1)) {
      throw new RangeError('journal maxBatchesInFlight must be an integer ≥ 1');
    }
    this.#log = options.log ?? (() => undefined);
    this.#firstSeq = range.firstSeq;
    this.#lastSeq = range.lastSeq;
    this.#durableSeq = range.lastSeq;
    this.#lastStreamSeq = info.state.last_seq;
    this.#firstOwnStreamSeq = info.state.last_seq + 1;
    this.#inbox = createInbox();
    this.#acks = nc.subscribe(`${this.#inbox}.*`, { callback: (error, msg) => this.#onAck(error, msg) });
    this.#watchdog = setInterval(() => this.#checkAcks(), Math.max(10, this.#ackTimeoutMs / 4));
    this.#watchdog.unref();
    void this.#followStatus();
  }

  /**
   * Checks the servers' sync setting, connects, and creates the stream if it does not exist (or
   * checks that the existing one can hold a journal: file storage, this subject, no limits that
   * would drop records). The journal continues after the last record in the stream.
   */
  static async open(options: JetStreamJournalOptions): Promise<JetStreamJournal> {
    await checkServerSync(asList(options.monitorUrls));
    const name = options.stream ?? 'BOURSE_JOURNAL';
    const subject = options.subject ?? 'bourse.journal';
    const nc = await connect({
      servers: asList(options.servers),
      name: `bourse-journal ${name}`,
      maxReconnectAttempts: -1,
    });
    try {
      const jsm = await jetstreamManager(nc);
      const info = await ensureStream(jsm, name, subject, options);
      const { state } = info;
      let range = { firstSeq: 1, lastSeq: 0 };
      if (state.messages > 0) {
        const first = await batchAt(jsm, name, state.first_seq);
        const last = await batchAt(jsm, name, state.last_seq);
        range = { firstSeq: first.first, lastSeq: last.last };
      }
      const journal = new JetStreamJournal(nc, jsm, info, range, subject, options);
      if (options.fence === true) {
        try {
          await journal.#fence();
        } catch (error) {
          await journal.close().catch(() => undefined);
          throw error;
        }
      }
      return journal;
    } catch (error) {
      if (!nc.isClosed()) await nc.close();
      throw error;
    }
  }

  /**
   * Publishes the fence: an empty message (`Bourse-Seq: <last + 1>-<last>`) expecting the
   * stream's last message, so that every earlier writer's next message is refused. Rejects with
   * JournalContendedError when the stream moved since `open` read it.
   */
  #fence(): Promise<void> {
    const fence: Batch = {
      buf: Buffer.alloc(0),
      used: 0,
      tags: '',
      firstSeq: this.#lastSeq + 1,
      lastSeq: this.#lastSeq,
      streamSeq: 0,
      headers: null,
      sentAt: 0,
      acked: false,
    };
    const done = new Promise<void>((resolve, reject) => {
      this.#fencing = { batch: fence, resolve, reject };
    });
    // Its refusal is open's to report: the journal's failure must not be thrown on its own.
    const quiet = this.onError(() => undefined);
    this.#sealed.push(fence);
    this.#pump();
    return done.finally(quiet);
  }

  /** Highest sequence number appended (durable or not). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Highest sequence number the stream has acknowledged, with every one before it. */
  get durableSeq(): number {
    return this.#durableSeq;
  }

  /** Oldest sequence number still in the stream (`lastSeq + 1` when it holds none). */
  get firstSeq(): number {
    return Math.min(this.#firstSeq, this.#lastSeq + 1);
  }

  /** Bytes of the message bodies published (the records and their lengths; headers and re-publishes not counted). */
  get stats(): { readonly bytesWritten: number } {
    return { bytesWritten: this.#bytesPublished };
  }

  /** Records appended but not yet acknowledged (for backpressure). */
  get pending(): number {
    return this.#lastSeq - this.#durableSeq;
  }

  /** The failure that stopped the journal, or null while healthy. */
  get failure(): Error | null {
    return this.#failure;
  }

  /** Messages published (re-publishes after a reconnect not counted), for tests and metrics. */
  get messages(): number {
    return this.#lastStreamSeq - this.#firstOwnStreamSeq + 1;
  }

  /**
   * Buffers a record into the current batch. `seq` must be `lastSeq + 1`. Throws (and changes
   * nothing) on a wrong seq, a payload that cannot fit in a message, after `close()` or after a
   * failure. The payload is copied, so the caller may reuse its buffer.
   */
  append(seq: number, payload: Uint8Array, tag?: string): void {
    if (this.#failure !== null) throw this.#failure;
    if (this.#closing !== null) throw new Error('journal is closed');
    if (seq !== this.#lastSeq + 1) {
      throw new RangeError(`journal append: seq ${seq} does not follow the last seq ${this.#lastSeq}`);
    }
    if (tag !== undefined && !TAG_PATTERN.test(tag)) {
      throw new RangeError(
        `journal append: a record's tag is 1 to 64 of [A-Za-z0-9_-], not ${JSON.stringify(tag)}`,
      );
    }
    const size = LENGTH_BYTES + payload.length;
    // A tag travels in the header as ` <offset>:<tag>` (offset at most 7 digits in a 1 MiB message).
    const tagBytes = tag === undefined ? 0 : tag.length + 9;
    if (size + tagBytes > this.#maxBatchBytes) {
      throw new RangeError(
        `journal append: payload of ${payload.length} bytes exceeds a message's ${this.#maxBatchBytes - LENGTH_BYTES}`,
      );
    }
    let batch = this.#open;
    if (batch !== null && batch.used + batch.tags.length + size + tagBytes > this.#maxBatchBytes) {
      this.#seal();
      batch = null;
    }
    if (batch === null) batch = this.#startBatch(seq, size);
    if (tag !== undefined) batch.tags += `${batch.tags === '' ? '' : ' '}${seq - batch.firstSeq}:${tag}`;
    else if (batch.used + size > batch.buf.length) {
      const bigger = Buffer.allocUnsafe(
        Math.min(this.#maxBatchBytes, Math.max(batch.buf.length * 2, batch.used + size)),
      );
      batch.buf.copy(bigger, 0, 0, batch.used);
      batch.buf = bigger;
    }
    batch.buf.writeUInt32LE(payload.length, batch.used);
    batch.buf.set(payload, batch.used + LENGTH_BYTES);
    batch.used += size;
    batch.lastSeq = seq;
    this.#lastSeq = seq;
  }

  /**
   * Subscribes to the durability watermark: called once per burst of acknowledgements with the
   * new `durableSeq`. Returns a function that unsubscribes.
   */
  onDurable(listener: (durableSeq: number) => void): () => void {
    return this.#reports.onDurable(listener);
  }

  /**
   * Subscribes to the journal's failure (a message refused by the stream, no acknowledgement in
   * time, a connection that cannot publish); called once. With no listener the error is thrown
   * asynchronously. Returns a function that unsubscribes.
   */
  onError(listener: (error: Error) => void): () => void {
    return this.#reports.onError(listener);
  }

  /** Resolves once `durableSeq >= seq`; rejects if the journal fails first. */
  whenDurable(seq: number): Promise<void> {
    if (seq <= this.#durableSeq) return Promise.resolve();
    if (this.#failure !== null) return Promise.reject(this.#failure);
    return this.#reports.waitFor(seq);
  }

  /**
   * Records from `fromSeq` up to the `durableSeq` at the time of the call, in order: the message
   * holding `fromSeq` is found by a binary search over the stream, and the rest is read with an
   * ordered consumer. Rejects with RangeError when `fromSeq` precedes the oldest record in the
   * stream, and with an Error when a message is not a journal batch or records are missing.
   */
  read(fromSeq: number): AsyncGenerator<JournalRecord> {
    return this.#read(Math.max(fromSeq, 1), this.#durableSeq);
  }

  async *#read(start: number, endSeq: number): AsyncGenerator<JournalRecord> {
    if (start > endSeq) return;
    const found = await this.#findBatch(start);
    const consumer = await jetstream(this.#nc).consumers.get(this.stream, {
      filter_subjects: this.#streamSubjects,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: found.streamSeq,
    });
    // Bounded by bytes: a message may carry up to maxBatchBytes of records.
    const messages = await consumer.consume({ max_bytes: READ_AHEAD_BYTES });
    try {
      let expected = found.first;
      for await (const m of messages) {
        const { first, last } = batchRange(m.headers, m.seq);
        if (first !== expected) {
          throw new Error(
            `stream ${this.stream} message ${m.seq} starts at seq ${first}, expected ${expected}: records are missing`,
          );
        }
        for (const record of batchRecords(m.data, first, last, batchTags(m.headers, first))) {
          if (record.seq > endSeq) return;
          if (record.seq >= start) yield record;
        }
        if (last >= endSeq) return;
        expected = last + 1;
      }
    } finally {
      messages.stop();
    }
  }

  /**
   * Retention: purges the messages whose records all precede `seq`, never the last one (in the
   * background: a failed purge is logged and only leaves more history). Returns what it asked to
   * remove.
   */
  removeSegmentsBefore(seq: number): string[] {
    const upTo = Math.min(seq, this.#durableSeq);
    if (upTo <= this.#firstSeq) return [];
    const what = `stream ${this.stream} messages before the one holding seq ${upTo}`;
    this.#purging = this.#purging
      .then(async () => {
        const found = await this.#findBatch(upTo);
        await this.#jsm.streams.purge(this.stream, { seq: found.streamSeq });
        this.#firstSeq = Math.max(this.#firstSeq, found.first);
      })
      .then(
        () => undefined,
        (error: unknown) =>
          this.#log(`journal retention: purging ${what} failed: ${(error as Error).message}`),
      );
    return [what];
  }

  /**
   * Publishes what is gathered, waits for every appended record to be acknowledged, then closes
   * the connection. Appends are refused from the call on. Rejects with the failure if the journal
   * failed (the connection is closed either way).
   */
  close(): Promise<void> {
    if (this.#closing === null) this.#closing = this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#openDue = true;
    this.#pump();
    try {
      await this.whenDurable(this.#lastSeq);
    } finally {
      clearInterval(this.#watchdog);
      if (this.#immediate !== null) clearImmediate(this.#immediate);
      this.#reports.rejectWaiters(new Error('journal is closed'));
      this.#acks.unsubscribe();
      await this.#purging;
      await this.#nc.close();
    }
  }

  /** The stream sequence of the message holding journal `seq`. */
  #findBatch(seq: number): Promise<{ streamSeq: number; first: number }> {
    return findBatch(this.#jsm, this.stream, seq);
  }

  #startBatch(seq: number, firstRecordBytes: number): Batch {
    const batch: Batch = {
      buf: Buffer.allocUnsafe(Math.min(this.#maxBatchBytes, Math.max(64 * 1024, firstRecordBytes))),
      used: 0,
      tags: '',
      firstSeq: seq,
      lastSeq: seq - 1,
      streamSeq: 0,
      headers: null,
      sentAt: 0,
      acked: false,
    };
    this.#open = batch;
    this.#openDue = false;
    // The batch closes at the end of this event-loop turn: everything one turn appended shares a message.
    this.#immediate ??= setImmediate(() => {
      this.#immediate = null;
      this.#openDue = true;
      this.#pump();
    });
    return batch;
  }

  #seal(): void {
    if (this.#open === null) return;
    this.#sealed.push(this.#open);
    this.#open = null;
    this.#openDue = false;
  }

  /** Publishes sealed batches, and the open one once due, while fewer than the limit await acknowledgement. */
  #pump(): void {
    while (this.#failure === null && this.#inFlight.length < this.#maxInFlight) {
      if (this.#sealed.length === 0) {
        if (this.#open === null || !this.#openDue) return;
        this.#seal();
      }
      const batch = this.#sealed.shift() as Batch;
      const streamSeq = ++this.#lastStreamSeq;
      const h = headers();
      // A fence holds no record: its id must not be the one of the batch that follows it.
      const fence = batch.lastSeq < batch.firstSeq;
      h.set('Nats-Msg-Id', `${this.#writerId}-${fence ? 'fence' : batch.firstSeq}`);
      h.set('Nats-Expected-Stream', this.stream);
      h.set('Nats-Expected-Last-Sequence', String(streamSeq - 1));
      h.set(
        'Nats-Expected-Last-Subject-Sequence',
        String(streamSeq === this.#firstOwnStreamSeq ? 0 : streamSeq - 1),
      );
      h.set(SEQ_HEADER, `${batch.firstSeq}-${batch.lastSeq}`);
      if (batch.tags !== '') h.set(TAGS_HEADER, batch.tags);
      batch.streamSeq = streamSeq;
      batch.headers = h;
      this.#inFlight.push(batch);
      this.#bytesPublished += batch.used;
      this.#publish(batch);
    }
  }

  #publish(batch: Batch): void {
    batch.sentAt = performance.now();
    try {
      this.#nc.publish(this.subject, batch.buf.subarray(0, batch.used), {
        headers: batch.headers as MsgHdrs,
        reply: `${this.#inbox}.${batch.streamSeq}`,
      });
    } catch (error) {
      this.#fail(
        `publishing records ${batch.firstSeq}-${batch.lastSeq} failed: ${(error as Error).message}`,
        error,
      );
    }
  }

  #onAck(error: Error | null, msg: Msg): void {
    if (this.#failure !== null) return;
    if (error !== null) {
      this.#fail(`the acknowledgement subscription failed: ${error.message}`, error);
      return;
    }
    const streamSeq = Number(msg.subject.slice(this.#inbox.length + 1));
    const inFlight = this.#inFlight;
    const batch = inFlight.find((b) => b.streamSeq === streamSeq);
    if (batch === undefined) return; // a duplicate acknowledgement of a re-publish
    let ack: PubAck;
    try {
      ack = msg.json<PubAck>();
    } catch {
      this.#fail(
        `unreadable acknowledgement for records ${batch.firstSeq}-${batch.lastSeq}: ${msg.string()}`,
      );
      return;
    }
    const records = `records ${batch.firstSeq}-${batch.lastSeq}`;
    if (ack.error !== undefined) {
      const description = ack.error.description ?? JSON.stringify(ack.error);
      if (this.#fencing?.batch === batch && ack.error.err_code === WRONG_LAST_SEQUENCE) {
        this.#fencing.reject(
          new JournalContendedError(
            `stream ${this.stream} refused this writer's fence: ${description} (another writer appended while it opened)`,
          ),
        );
        this.#fencing = null;
      }
      this.#fail(
        ack.error.err_code === WRONG_LAST_SEQUENCE
          ? `stream ${this.stream} refused ${records}: ${description} (another writer has appended since this one opened: it is deposed)`
          : `stream ${this.stream} refused ${records}: ${description}`,
      );
      return;
    }
    if (ack.stream !== this.stream || ack.seq !== streamSeq) {
      this.#fail(
        `${records} were stored as ${ack.stream ?? '?'} message ${ack.seq ?? '?'}, not ${this.stream} message ${streamSeq}: ` +
          'the stream must hold this journal alone',
      );
      return;
    }
    batch.acked = true;
    if (this.#fencing?.batch === batch) {
      this.#fencing.resolve();
      this.#fencing = null;
    }
    let n = 0;
    while (n < inFlight.length && (inFlight[n] as Batch).acked) n++;
    if (n === 0) return;
    this.#durableSeq = (inFlight[n - 1] as Batch).lastSeq;
    inFlight.splice(0, n);
    this.#pump();
    // Acknowledgements arrive in bursts (one socket read): tell listeners once per burst.
    if (!this.#notifyScheduled) {
      this.#notifyScheduled = true;
      queueMicrotask(() => this.#notify());
    }
  }

  #notify(): void {
    this.#notifyScheduled = false;
    if (this.#failure === null) this.#reports.reached(this.#durableSeq);
  }

  /** Fails the journal when the oldest unacknowledged message has waited too long. */
  #checkAcks(): void {
    const oldest = this.#inFlight[0];
    if (this.#failure !== null || oldest === undefined) return;
    const waited = performance.now() - oldest.sentAt;
    if (waited > this.#ackTimeoutMs) {
      this.#fail(
        `no acknowledgement from stream ${this.stream} for records ${oldest.firstSeq}-${oldest.lastSeq} in ${Math.round(waited)} ms`,
      );
    }
  }

  /**
   * After a reconnect, publishes every unacknowledged message again, in order: acknowledgements
   * sent while the connection was down are lost, and messages the server never received must go.
   * Messages it did store are acknowledged as duplicates (same message id).
   */
  async #followStatus(): Promise<void> {
    for await (const status of this.#nc.status()) {
      if (status.type === 'disconnect') this.#log(`journal: disconnected from NATS (${status.server})`);
      if (status.type !== 'reconnect' || this.#failure !== null) continue;
      this.#log(
        `journal: reconnected to ${status.server}; publishing ${this.#inFlight.length} unacknowledged messages again`,
      );
      for (const batch of this.#inFlight) if (!batch.acked) this.#publish(batch);
    }
  }

  #fail(message: string, cause?: unknown): void {
    if (this.#failure !== null) return;
    const failure = new JournalFailedError(
      `journal failed after durable seq ${this.#durableSeq}: ${message}; nothing after it is acknowledged`,
      cause,
    );
    this.#failure = failure;
    this.#fencing?.reject(failure);
    this.#fencing = null;
    if (this.#immediate !== null) clearImmediate(this.#immediate);
    this.#immediate = null;
    this.#reports.failed(failure);
  }
}

/** The journal sequence numbers of the stream's message `streamSeq`. */
async function batchAt(
  jsm: JetStreamManager,
  stream: string,
  streamSeq: number,
): Promise<{ first: number; last: number }> {
  const message = await jsm.streams.getMessage(stream, { seq: streamSeq });
  if (message === null) throw new Error(`stream ${stream} has no message ${streamSeq}`);
  return batchRange(message.header, streamSeq);
}

/** The journal sequence number of the stream's last record (0 when it holds none). */
export async function lastJournalSeq(jsm: JetStreamManager, stream: string): Promise<number> {
  const { state } = await jsm.streams.info(stream);
  return state.messages === 0 ? 0 : (await batchAt(jsm, stream, state.last_seq)).last;
}

/**
 * The stream sequence of the message holding journal `seq`, and that message's first record, by
 * binary search over the stream. Throws a RangeError when no message holds it (empty, pruned, ahead).
 */
export async function findBatch(
  jsm: JetStreamManager,
  stream: string,
  seq: number,
): Promise<{ streamSeq: number; first: number }> {
  const { state } = await jsm.streams.info(stream);
  if (state.messages === 0) throw new RangeError(`journal read from seq ${seq}: stream ${stream} is empty`);
  let lo = state.first_seq;
  let hi = state.last_seq;
  const oldest = await batchAt(jsm, stream, lo);
  if (seq < oldest.first) {
    throw new RangeError(
      `journal read from seq ${seq}: the oldest record in stream ${stream} is ${oldest.first}`,
    );
  }
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    const range = await batchAt(jsm, stream, mid);
    if (seq < range.first) hi = mid - 1;
    else if (seq > range.last) lo = mid + 1;
    else return { streamSeq: mid, first: range.first };
  }
  throw new RangeError(`journal read from seq ${seq}: no message of stream ${stream} holds it`);
}

/** The stream, created if absent; an existing one must be able to hold a journal. */
async function ensureStream(
  jsm: JetStreamManager,
  name: string,
  subject: string,
  options: JetStreamJournalOptions,
): Promise<StreamInfo> {
  let info: StreamInfo;
  try {
    info = await jsm.streams.info(name);
  } catch (error) {
    if (!/stream not found/i.test((error as Error).message)) throw error;
    return jsm.streams.add({
      name,
      subjects: [`${subject}.*`],
      storage: StorageType.File,
      num_replicas: options.replicas ?? 1,
      duplicate_window: (options.duplicateWindowMs ?? 120_000) * NANOS_PER_MS,
      deny_delete: true,
    });
  }
  const c = info.config;
  const problems: string[] = [];
  if (c.subjects?.length !== 1 || c.subjects[0] !== `${subject}.*`) {
    problems.push(`its subjects are [${(c.subjects ?? []).join(', ')}], not [${subject}.*]`);
  }
  if (c.storage !== StorageType.File) problems.push(`its storage is ${c.storage}, not file`);
  if (c.max_msgs > 0 || c.max_bytes > 0 || c.max_age > 0 || (c.max_msgs_per_subject ?? 0) > 0) {
    problems.push(
      'it has limits (max_msgs, max_bytes, max_age or max_msgs_per_subject) that would drop records',
    );
  }
  if (c.retention !== RetentionPolicy.Limits) problems.push(`its retention is ${c.retention}, not limits`);
  if (problems.length > 0) {
    throw new Error(`stream ${name} cannot hold the journal: ${problems.join('; ')}`);
  }
  return info;
}
