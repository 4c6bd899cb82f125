/**
 * @module venue-ports — what the venue offers every adapter that serves it (HTTP, WebSocket,
 * market data, history, the chain watcher): a read-only view of the state, a port to submit
 * commands, and a feed of applied commands that each consumer joins from a sequence number.
 *
 * In the embedded server the three are the sequencer and its engine. A gateway in its own process
 * has the same three: a replica of the engine fed by the journal's stream, and a submit that
 * forwards to the engine's process. The adapters cannot tell the difference.
 */
import type { Command } from '../domain/commands.ts';
import type { ApplyResult, Engine } from '../engine/engine.ts';
import type { AppliedListener } from './sequencer.ts';

/**
 * The engine's state, read-only: every public read of the engine and nothing that applies a
 * command. Everything in it is durable (only durable commands are applied).
 */
export type VenueState = Omit<Engine, 'apply'>;

/** Where commands go: sequenced, journaled, applied. */
export interface SubmitPort {
  /**
   * Resolves with the engine's result once the command is durable and applied, or BUSY (nothing
   * journaled) when the pipeline is over its bounds; rejects when the venue has stopped.
   */
  submit(command: Command): Promise<ApplyResult>;
}

/** The stream of applied commands, joined from a sequence number. */
export interface AppliedFeed {
  /** The sequence number of the last command applied to the state the feed's consumers read. */
  readonly appliedSeq: number;
  /**
   * Delivers every applied batch whose commands start at `fromSeq`, in sequence order, each command
   * once, after the state reflects it. A consumer passes the seq after the one its own state is at
   * (usually `appliedSeq + 1` when it was built from the live state). Throws a FeedPositionError
   * when the feed cannot deliver from there (an embedded feed keeps no past; a stream's may be pruned).
   */
  subscribe(fromSeq: number, listener: AppliedListener): void;
}

/** A subscription the feed cannot serve: it would skip commands or deliver some twice. */
export class FeedPositionError extends RangeError {
  constructor(fromSeq: number, canStart: string) {
    super(`cannot feed applied commands from seq ${fromSeq}: ${canStart}`);
    this.name = 'FeedPositionError';
  }
}
