/**
 * @module command-link — commands from gateway processes to the engine's, over NATS request/reply
 * (docs/scale-out.md, "Roles" and "Hot standby and failover").
 *
 * The leading engine answers on `<subject>` once the command is durable and applied:
 * `{ ok: true, seq, result }` with the engine's ApplyResult and the seq the engine had applied by
 * then (this command's or later). The gateway's RemoteSubmit then waits for its own replica to
 * reach that seq, so a read after the reply sees the command (read your writes).
 *
 * Applied once, or NOT_ACCEPTED: every request carries an id, journaled with its command (the
 * JetStream journal keeps it in the message's `Bourse-Ids` header). An engine remembers the ids
 * it answered and the ids it read from the stream (as a standby, and in its recovery) for
 * `dedupWindowMs`, and answers a request it has seen with the first answer, never applying it
 * again. So RemoteSubmit may send a request again, with the same id, whenever it got no answer:
 * no engine subscribed (a failover: "no responders"), no answer within `attemptTimeoutMs` (the
 * leader died or paused with it), or an engine that has stopped (a deposed leader). Past
 * `timeoutMs` the command is NOT_ACCEPTED (1009, "check its effect").
 *
 * A plain subscription, not a queue group: a leader paused (SIGSTOP, a frozen VM) stays
 * subscribed until NATS notices it is gone (its ping interval, 2 minutes by default), and would
 * take half of a queue group's requests meanwhile. Every engine that believes it leads receives
 * every request; only the one that holds the journal can apply it (a deposed one's appends are
 * refused, it answers "stopped" and stops).
 */
import { randomUUID } from 'node:crypto';
import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Command } from '../domain/commands.ts';
import type { ApplyResult } from '../engine/engine.ts';
import { TAG_PATTERN } from '../journal/jetstream-journal.ts';
import type { Log } from '../domain/log.ts';
import { SequencerStoppedError, type AppliedCommand } from '../sequencer/sequencer.ts';

/** The subject commands travel on by default. */
export const COMMAND_SUBJECT = 'bourse.commands';
/** How long an engine remembers an answered or journaled request id (ms). */
export const DEDUP_WINDOW_MS = 120_000;

interface CommandRequest {
  readonly id: string;
  readonly command: Command;
}

type CommandReply =
  | { readonly ok: true; readonly seq: number; readonly result: ApplyResult }
  | { readonly ok: false; readonly stopped: boolean; readonly message: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What the engine's side needs: the sequencer's submit (journaling the request id) and where its applied state stands. */
export interface CommandTarget {
  submit(command: Command, requestId?: string): Promise<ApplyResult>;
  readonly appliedSeq: number;
}

/** A request id read from the journal with its command's seq, time and result (when known). */
export interface JournaledAnswer {
  readonly id: string;
  readonly seq: number;
  /** The command's time (ms): the answer is kept for the window from then. */
  readonly at: number;
  /** Undefined for an id read without its command's result (recent-ids.ts): answered "already applied". */
  readonly result: ApplyResult | undefined;
}

/**
 * The request ids of the journal's recent commands, collected from applied batches (a standby's
 * replica, a recovery's replay) for the CommandService that takes over: a gateway's request sent
 * again after a failover is answered, not applied twice.
 */
export class JournaledAnswers {
  readonly #windowMs: number;
  readonly #now: () => number;
  /** By id, oldest first. */
  readonly #answers = new Map<string, JournaledAnswer>();

  constructor(windowMs = DEDUP_WINDOW_MS, now: () => number = Date.now) {
    this.#windowMs = windowMs;
    this.#now = now;
  }

  /** An AppliedListener: keeps the tagged commands of the batch. */
  readonly add = (batch: readonly AppliedCommand[]): void => {
    const since = this.#now() - this.#windowMs;
    for (const { command, result, requestId } of batch) {
      if (requestId === undefined || command.time < since) continue;
      this.#answers.delete(requestId);
      this.#answers.set(requestId, { id: requestId, seq: command.seq, at: command.time, result });
    }
    for (const [id, answer] of this.#answers) {
      if (answer.at >= since) break;
      this.#answers.delete(id);
    }
  };

  /**
   * Ids known to be journaled, without their results (read from the stream's headers before the
   * replica's or the replay's start); an id the applied batches bring keeps its result.
   */
  addJournaled(ids: Iterable<{ readonly id: string; readonly seq: number; readonly at: number }>): void {
    for (const { id, seq, at } of ids) {
      if (!this.#answers.has(id)) this.#answers.set(id, { id, seq, at, result: undefined });
    }
  }

  get size(): number {
    return this.#answers.size;
  }

  values(): IterableIterator<JournaledAnswer> {
    return this.#answers.values();
  }
}

export interface CommandServiceOptions {
  readonly subject?: string;
  /** How long an answered id is remembered (default 2 minutes). */
  readonly dedupWindowMs?: number;
  /** Ids the journal already holds (a standby taking over): answered from here, never applied again. */
  readonly journaled?: Iterable<JournaledAnswer>;
  readonly log: Log;
}

/** The engine's end: takes commands from the gateways and answers once they are durable and applied. */
export class CommandService {
  readonly #nc: NatsConnection;
  readonly #sub: Subscription;
  readonly #target: CommandTarget;
  readonly #log: Log;
  readonly #dedupWindowMs: number;
  /** Answers by request id, oldest first (a Map keeps insertion order). */
  readonly #answers = new Map<string, { readonly at: number; readonly reply: Promise<CommandReply> }>();

  constructor(nc: NatsConnection, target: CommandTarget, options: CommandServiceOptions) {
    this.#nc = nc;
    this.#target = target;
    this.#log = options.log;
    this.#dedupWindowMs = options.dedupWindowMs ?? DEDUP_WINDOW_MS;
    for (const { id, seq, at, result } of options.journaled ?? []) {
      const reply: CommandReply =
        result === undefined
          ? {
              ok: false,
              stopped: false,
              message: `the command was already applied (seq ${seq}) and its result is not known here: check its effect`,
            }
          : { ok: true, seq, result };
      this.#answers.set(id, { at, reply: Promise.resolve(reply) });
    }
    this.#sub = nc.subscribe(options.subject ?? COMMAND_SUBJECT, {
      callback: (error, msg) => {
        if (error === null) this.#take(msg);
      },
    });
  }

  /** Resolves once the server has the subscription: a request sent after it reaches this engine. */
  ready(): Promise<void> {
    return this.#nc.flush();
  }

  /** How many request ids it remembers. */
  get remembered(): number {
    return this.#answers.size;
  }

  #take(msg: Msg): void {
    let request: CommandRequest;
    try {
      request = parseRequest(msg.data);
    } catch (error) {
      this.#log.warn({ err: error }, `refused a command request: ${(error as Error).message}`);
      msg.respond(encodeReply({ ok: false, stopped: false, message: (error as Error).message }));
      return;
    }
    this.#forget(Date.now());
    let answer = this.#answers.get(request.id);
    if (answer === undefined) {
      answer = { at: Date.now(), reply: this.#submit(request) };
      this.#answers.set(request.id, answer);
    }
    void answer.reply.then((reply) => msg.respond(encodeReply(reply)));
  }

  async #submit(request: CommandRequest): Promise<CommandReply> {
    try {
      const result = await this.#target.submit(request.command, request.id);
      // Kept for a repeated request: a copy of each event, which the engine reuses (event-pool.ts).
      const events = result.events.map((e) => ({ ...e }));
      return { ok: true, seq: this.#target.appliedSeq, result: { ...result, events } };
    } catch (error) {
      // Not journaled here: another engine may take it when it is sent again.
      this.#answers.delete(request.id);
      return {
        ok: false,
        stopped: error instanceof SequencerStoppedError,
        message: (error as Error).message,
      };
    }
  }

  #forget(now: number): void {
    for (const [id, answer] of this.#answers) {
      if (now - answer.at < this.#dedupWindowMs) break;
      this.#answers.delete(id);
    }
  }

  /**
   * Stops taking commands (those taken are still answered); resolves once the server knows, so a
   * request sent after it finds no engine here.
   */
  async close(): Promise<void> {
    if (this.#nc.isClosed() || this.#sub.isClosed()) return;
    await this.#sub.drain();
    await this.#nc.flush();
  }

  /**
   * Stops taking commands at once (a deposed leader): requests not yet taken are dropped, and
   * their gateways send them again to the engine that leads.
   */
  abandon(): void {
    if (!this.#sub.isClosed()) this.#sub.unsubscribe();
  }
}

export interface RemoteSubmitOptions {
  readonly subject?: string;
  /** How long a command may go unanswered, over every send, before it is NOT_ACCEPTED (default 5 s). */
  readonly timeoutMs?: number;
  /** How long one send waits for its answer before the request is sent again (default 1 s). */
  readonly attemptTimeoutMs?: number;
  /** Pause before sending again after finding no engine, or a stopped one (default 50 ms). */
  readonly retryDelayMs?: number;
}

/** Where the gateway's replica stands: the answer waits for it to reach the command's seq. */
export interface AppliedWatch {
  whenApplied(seq: number): Promise<void>;
}

/** What one send of a request came to: the engine's answer, no engine subscribed, or no answer in time. */
type SendOutcome = Msg | 'no responders' | 'timeout';

/**
 * The gateway's end: a SubmitPort that forwards to whichever engine leads.
 *
 * Requests go out with `publish` and a reply subject of this gateway's own (`<inbox>.<token>`, one
 * token per command), answered through one subscription on `<inbox>.*`, rather than through the
 * NATS client's `request()`: that one builds two or three `Error`s with stack traces per call
 * (its async traces, its timeout's, and the one its cancel rejects the settled promise with),
 * ~14% of a gateway's CPU per order (bench/README.md, "Cluster"). The server's "no responders"
 * status (an empty message with header code 503) comes on the reply subject like an answer.
 */
export class RemoteSubmit {
  readonly #nc: NatsConnection;
  readonly #replica: AppliedWatch;
  readonly #subject: string;
  readonly #timeoutMs: number;
  readonly #attemptTimeoutMs: number;
  readonly #retryDelayMs: number;
  readonly #inbox = createInbox();
  /** The send waiting for an answer, by token. */
  readonly #waiting = new Map<string, (msg: Msg) => void>();
  #nextToken = 0;

  constructor(nc: NatsConnection, replica: AppliedWatch, options: RemoteSubmitOptions = {}) {
    this.#nc = nc;
    this.#replica = replica;
    this.#subject = options.subject ?? COMMAND_SUBJECT;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#attemptTimeoutMs = options.attemptTimeoutMs ?? 1_000;
    this.#retryDelayMs = options.retryDelayMs ?? 50;
    nc.subscribe(`${this.#inbox}.*`, {
      callback: (error, msg) => {
        if (error === null) this.#waiting.get(msg.subject.slice(this.#inbox.length + 1))?.(msg);
      },
    });
  }

  /**
   * Resolves with the engine's result once the command is durable, applied, and applied on this
   * gateway's replica too. Rejects with a SequencerStoppedError (answered NOT_ACCEPTED at the
   * edge) when no engine answered it within `timeoutMs`: it may or may not have been applied.
   */
  readonly submit = async (command: Command): Promise<ApplyResult> => {
    const body = encoder.encode(JSON.stringify({ id: randomUUID(), command } satisfies CommandRequest));
    const token = String(this.#nextToken++);
    const giveUp = Date.now() + this.#timeoutMs;
    let problem = 'no engine answered';
    for (;;) {
      const left = giveUp - Date.now();
      if (left <= 0) {
        throw new SequencerStoppedError(
          `${problem} within ${this.#timeoutMs} ms: the command may or may not have been applied`,
        );
      }
      let outcome: SendOutcome;
      try {
        outcome = await this.#send(token, body, Math.min(this.#attemptTimeoutMs, left));
      } catch (error) {
        throw new SequencerStoppedError(
          `the command link failed: ${(error as Error).message}`,
          error as Error,
        );
      }
      // Sent again with the same id: an engine that has seen it answers, never applies it twice.
      if (outcome === 'no responders') {
        problem = 'no engine took the command (none leads)';
        await delay(this.#retryDelayMs);
        continue;
      }
      if (outcome === 'timeout') {
        problem = 'no engine answered';
        continue;
      }
      const reply = JSON.parse(decoder.decode(outcome.data)) as CommandReply;
      if (!reply.ok) {
        if (!reply.stopped)
          throw new SequencerStoppedError(`the engine refused the command: ${reply.message}`);
        // A deposed or failing leader: the one taking over will answer.
        problem = `the engine stopped (${reply.message})`;
        await delay(this.#retryDelayMs);
        continue;
      }
      await this.#replica.whenApplied(reply.seq);
      return reply.result;
    }
  };

  /**
   * Publishes the request with this command's reply subject; resolves with the first message on
   * it within `ms` (an answer to an earlier send of the same command will do: same id, same
   * answer). Throws when the connection cannot publish (closed).
   */
  #send(token: string, body: Uint8Array, ms: number): Promise<SendOutcome> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(token);
        resolve('timeout');
      }, ms);
      this.#waiting.set(token, (msg) => {
        clearTimeout(timer);
        this.#waiting.delete(token);
        resolve(msg.data.length === 0 && msg.headers?.code === 503 ? 'no responders' : msg);
      });
      try {
        this.#nc.publish(this.#subject, body, { reply: `${this.#inbox}.${token}` });
      } catch (error) {
        clearTimeout(timer);
        this.#waiting.delete(token);
        reject(error as Error);
      }
    });
  }
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function parseRequest(data: Uint8Array): CommandRequest {
  const value = JSON.parse(decoder.decode(data)) as Partial<CommandRequest> | null;
  if (
    value === null ||
    typeof value !== 'object' ||
    typeof value.id !== 'string' ||
    !TAG_PATTERN.test(value.id)
  ) {
    throw new Error('a command request is { id, command }, its id 1 to 64 of [A-Za-z0-9_-]');
  }
  const command = value.command as { type?: unknown } | null | undefined;
  if (command === null || typeof command !== 'object' || typeof command.type !== 'string') {
    throw new Error('a command request is { id, command } with a command type');
  }
  return value as CommandRequest;
}

function encodeReply(reply: CommandReply): Uint8Array {
  return encoder.encode(JSON.stringify(reply));
}

/** The subject the engine publishes its state hash on (`{ seq, stateHash }`), for the replicas to check theirs. */
export const STATE_HASH_SUBJECT = 'bourse.state';

/** The engine's side: every `everyMs`, when it has applied commands since, its state hash at its applied seq. */
export function publishStateHashes(
  nc: NatsConnection,
  state: { readonly lastSeq: number; stateHash(): string },
  everyMs: number,
  subject = STATE_HASH_SUBJECT,
): () => void {
  let published = state.lastSeq;
  const timer = setInterval(() => {
    if (state.lastSeq === published || nc.isClosed()) return;
    // Read in one turn: the hash is the state at exactly this seq.
    published = state.lastSeq;
    nc.publish(subject, JSON.stringify({ seq: published, stateHash: state.stateHash() }));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The gateway's side: hands each published hash to the replica (`expectHash`). */
export function followStateHashes(
  nc: NatsConnection,
  replica: { expectHash(seq: number, stateHash: string): void },
  subject = STATE_HASH_SUBJECT,
): Subscription {
  return nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error !== null) return;
      try {
        const { seq, stateHash } = JSON.parse(msg.string()) as { seq: unknown; stateHash: unknown };
        if (typeof seq === 'number' && typeof stateHash === 'string') replica.expectHash(seq, stateHash);
      } catch {
        // Not a state hash: ignored.
      }
    },
  });
}
