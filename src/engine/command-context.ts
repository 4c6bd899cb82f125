/** @module command-context — what every engine module shares about the command being applied: its time and the events it emits. */
import type { EngineEvent } from '../domain/events.ts';
import type { ResultName } from '../domain/result-codes.ts';
import { EventPool } from './event-pool.ts';
import type { ApplyResult } from './results.ts';

/**
 * One object for the engine's lifetime, reset by the dispatcher before each command (no
 * allocation per command). Modules append events in the order they change state.
 */
export class CommandContext {
  /** The events of the command being applied, in order. */
  events: EngineEvent[] = [];
  /** The command's time (ms), stamped at the edge. */
  time = 0;
  /** Where the hot events come from: fresh objects, or reused ones once enabled (src/engine/event-pool.ts). */
  readonly pool = new EventPool();

  /** Starts a command at `time`: a new list for its events (or a recycled one, event-pool.ts). */
  begin(time: number): this {
    this.time = time;
    this.events = this.pool.list();
    return this;
  }
}

/** A refusal: nothing changed, nothing emitted. */
export const refused = (result: ResultName, message?: string): ApplyResult =>
  message === undefined ? { result, events: [] } : { result, message, events: [] };
