/**
 * @module leader-lease — which engine leads a journal's stream: a lease held on a JetStream
 * key-value bucket (docs/scale-out.md, "Hot standby and failover").
 *
 * The bucket (`<stream>_LEASE`, file storage, the stream's replicas) keeps one key, `leader`, and
 * expires every revision `ttlMs` after it was written (the bucket's max_age). The leader holds
 * the lease by writing the key again every `ttlMs / 4` (at least every 300 ms: see
 * MIN_RENEW_EVERY_MS), each write a compare-and-set on the
 * revision it wrote last; a standby polls to create the key, which succeeds only once it is
 * absent, i.e. once the leader has not written it for `ttlMs` (measured by the NATS server; about
 * ±10 ms on 2.10). No timing of our own decides who leads.
 *
 * The leader gives the lease up on its own side too: once `ttlMs` have passed since it sent its
 * last successful renewal (a pause, a lost connection), it is lost, before the server lets a
 * standby create the key. Whatever a deposed leader still does is refused by the journal's fence
 * (jetstream-journal.ts): the lease decides who should write, the stream's expected sequences
 * make sure nobody else can.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { StorageType } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** The lease's length unless the bucket exists already (ms): see docs/scale-out.md for the trade-off. */
export const DEFAULT_LEASE_TTL_MS = 1_000;
/** How often a standby tries to take a free lease (ms). */
export const LEASE_POLL_MS = 50;
/**
 * Shortest spacing of the leader's renewals (ms). nats-server 2.10 checks a stream's max_age when
 * its oldest message is due, and when the message then oldest has less than 250 ms left it checks
 * again only a second later: a lease renewed every 200 ms was dropped up to ~0.75 s late in about
 * one failover in ten (bench/README.md, "Cluster failover"). At a check the key has either lapsed
 * or been renewed a whole number of spacings after the message that was due, so spacings of at
 * least 250 ms (300 with room for timer jitter) keep it out of that case.
 */
const MIN_RENEW_EVERY_MS = 300;
const KEY = 'leader';

export interface LeaseOptions {
  /** The journal's stream: the bucket is `<stream>_LEASE`. */
  readonly stream: string;
  /** The lease's length when the bucket is created (an existing bucket keeps its own). */
  readonly ttlMs?: number;
  /** Replicas of the bucket when it is created (the stream's: 3 in production). */
  readonly replicas?: number;
  /** Who this engine is, as the others are told (default host/pid/random). */
  readonly holder?: string;
}

/** What the key holds: the leading engine and since when. */
export interface LeaseHolder {
  readonly holder: string;
  readonly since: string;
}

export class LeaderLease {
  readonly holder: string;
  readonly bucket: string;
  /** The lease's length: the bucket's max_age. */
  readonly ttlMs: number;
  readonly #kv: KV;
  #revision = 0;
  /** performance.now() until which the lease is ours (the send time of the last renewal + ttl). */
  #validUntil = 0;
  #renewing: NodeJS.Timeout | undefined;
  /** The renewal on its way to the server, if any (release waits for it: it moves the revision). */
  #inFlight: Promise<void> | undefined;
  #lost: string | undefined;
  readonly #lostListeners: ((reason: string) => void)[] = [];

  private constructor(kv: KV, bucket: string, ttlMs: number, holder: string) {
    this.#kv = kv;
    this.bucket = bucket;
    this.ttlMs = ttlMs;
    this.holder = holder;
  }

  /** Opens (or creates) the stream's lease bucket; takes nothing yet. */
  static async open(nc: NatsConnection, options: LeaseOptions): Promise<LeaderLease> {
    const bucket = `${options.stream}_LEASE`;
    const kvm = new Kvm(nc);
    let kv: KV;
    try {
      kv = await kvm.open(bucket);
      await kv.status();
    } catch {
      kv = await kvm.create(bucket, {
        ttl: options.ttlMs ?? DEFAULT_LEASE_TTL_MS,
        history: 1,
        storage: StorageType.File,
        replicas: options.replicas ?? 1,
      });
    }
    const status = await kv.status();
    if (!(status.ttl > 0)) {
      throw new Error(
        `the lease bucket ${bucket} has no max_age: a lease that never lapses cannot fail over`,
      );
    }
    const holder = options.holder ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 4)}`;
    return new LeaderLease(kv, bucket, status.ttl, holder);
  }

  /** Who holds the lease now, or undefined when it is free. */
  async current(): Promise<LeaseHolder | undefined> {
    const entry = await this.#kv.get(KEY);
    if (entry === null || entry.operation !== 'PUT') return undefined;
    try {
      return entry.json<LeaseHolder>();
    } catch {
      return { holder: entry.string(), since: entry.created.toISOString() };
    }
  }

  /** Whether this engine holds the lease (and has not lost it). */
  get held(): boolean {
    return this.#revision > 0 && this.#lost === undefined;
  }

  /** Takes the lease if it is free; then keeps it until `release` or until it is lost. */
  async tryAcquire(): Promise<boolean> {
    if (this.#lost !== undefined) return false;
    const sent = performance.now();
    try {
      this.#revision = await this.#kv.create(KEY, this.#value());
    } catch {
      return false;
    }
    this.#validUntil = sent + this.ttlMs;
    this.#renewing = setInterval(
      () => this.#renew(),
      Math.max(MIN_RENEW_EVERY_MS, Math.floor(this.ttlMs / 4)),
    );
    return true;
  }

  /** Polls every `pollMs` until the lease is taken; rejects when `signal` aborts. */
  async acquire(signal?: AbortSignal, pollMs = LEASE_POLL_MS): Promise<void> {
    while (!(await this.tryAcquire())) {
      signal?.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      signal?.throwIfAborted();
    }
  }

  /** Called once, with the reason, when a held lease is lost (not on `release`). */
  onLost(listener: (reason: string) => void): void {
    this.#lostListeners.push(listener);
  }

  #value(): string {
    return JSON.stringify({ holder: this.holder, since: new Date().toISOString() } satisfies LeaseHolder);
  }

  #renew(): void {
    if (performance.now() > this.#validUntil) {
      this.#lose(`no renewal of the lease succeeded in ${this.ttlMs} ms (paused, or cut off from NATS)`);
      return;
    }
    if (this.#inFlight !== undefined) return;
    const sent = performance.now();
    this.#inFlight = this.#kv
      .update(KEY, this.#value(), this.#revision, Math.max(10, this.#validUntil - sent))
      .then(
        (revision) => {
          if (this.#lost !== undefined) return;
          this.#revision = revision;
          this.#validUntil = sent + this.ttlMs;
        },
        async (error: unknown) => {
          if (this.#lost !== undefined || this.#renewing === undefined) return;
          if (!/wrong last sequence/i.test((error as Error).message)) return; // retried at the next tick
          const now = await this.current().catch(() => undefined);
          this.#lose(
            now === undefined
              ? 'the lease lapsed before this engine renewed it'
              : `the lease is held by ${now.holder} since ${now.since}`,
          );
        },
      )
      .finally(() => {
        this.#inFlight = undefined;
      });
  }

  #lose(reason: string): void {
    if (this.#lost !== undefined) return;
    this.#lost = reason;
    clearInterval(this.#renewing);
    this.#renewing = undefined;
    for (const listener of this.#lostListeners) listener(reason);
  }

  /** Stops renewing and frees the lease at once (if still held), so that a standby takes over without waiting for it to lapse. */
  async release(): Promise<void> {
    const held = this.held;
    clearInterval(this.#renewing);
    this.#renewing = undefined;
    if (!held) return;
    await this.#inFlight; // a renewal under way moves the revision the delete must name
    this.#lost = 'released';
    await this.#kv.delete(KEY, { previousSeq: this.#revision }).catch(() => undefined);
  }
}
