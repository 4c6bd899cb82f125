/**
 * @module ports — what the sequencer needs from the outside: a journal, a snapshot store, a clock.
 * Adapters (src/journal/*: local files or a JetStream stream) implement these structurally.
 */
import type { EngineSnapshot } from '../engine/snapshot.ts';

/** One journal record: its sequence number and the opaque bytes stored for it. */
export interface JournalRecord {
  readonly seq: number;
  readonly payload: Uint8Array;
  /** The request id stored with the record, by a journal that keeps them (the JetStream one). */
  readonly tag?: string;
}

/** An append-only, sequence-numbered log with group-committed durability. */
export interface JournalPort {
  /**
   * Buffers a record; `seq` must be the last appended + 1. Durability is reported later. `tag`
   * (a request id, 1–64 of [A-Za-z0-9_-]) is kept with the record by a journal that can (the
   * JetStream one, for a new leader's duplicate detection), and ignored by the others.
   */
  append(seq: number, payload: Uint8Array, tag?: string): void;
  /** The highest sequence number known to be durable. */
  readonly durableSeq: number;
  /** Records appended but not yet durable (for backpressure). */
  readonly pending: number;
  /** Called after each durable batch with the new watermark. */
  onDurable(listener: (durableSeq: number) => void): void;
  /** Called once if writing or syncing fails: nothing after it is acknowledged. */
  onError(listener: (error: Error) => void): void;
  /**
   * Records from `fromSeq` to the durable end, in order: synchronously from local files, or
   * asynchronously from a stream over the network.
   */
  read(fromSeq: number): Iterable<JournalRecord> | AsyncIterable<JournalRecord>;
  /** Deletes stored records (whole segments, or a stream's prefix) that all precede `seq`; returns what it removed. */
  removeSegmentsBefore(seq: number): string[];
  close(): Promise<void>;
}

export interface StoredSnapshot {
  readonly path: string;
  readonly lastSeq: number;
  readonly stateHash: string;
  readonly state: unknown;
}

export interface SnapshotPort {
  write(state: EngineSnapshot, meta: { lastSeq: number; stateHash: string }): Promise<string>;
  latestValid(): StoredSnapshot | undefined;
  /** Keeps the `keep` newest valid snapshots; returns what it removed. */
  prune(keep: number): string[];
  /** Snapshots from newest to oldest (metadata only). */
  list(): { path: string; lastSeq: number }[];
}

/** Wall-clock milliseconds. The sequencer makes stamped times non-decreasing. */
export type Clock = () => number;
