/**
 * @module command-link — commands from gateway processes to the engine's, over NATS request/reply
 * (docs/scale-out.md, "Roles").
 *
 * The engine answers on `<subject>` (a queue group: only the leader subscribes) once the command
 * is durable and applied: `{ ok: true, seq, result }` with the engine's ApplyResult and the seq the
 * engine had applied by then (this command's or later). The gateway's RemoteSubmit then waits for
 * its own replica to reach that seq, so a read after the reply sees the command (read your writes).
 *
 * Applied once or refused, never twice: a request that reached no engine (NATS answers "no
 * responders": the leader is gone and the standby has not subscribed yet) cannot have been
 * applied, so RemoteSubmit sends it again, with the same id, until its deadline. A request that
 * reached an engine but got no answer in time may or may not have been journaled: it is answered
 * NOT_ACCEPTED (1009, "check its effect"), never sent again. The engine also remembers each id it
 * answered for `dedupWindowMs`, so a request delivered twice is applied once.
 */
import { randomUUID } from 'node:crypto';
import { RequestError, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Command } from '../domain/commands.ts';
import type { ApplyResult } from '../engine/engine.ts';
import type { Log } from '../sequencer/ports.ts';
import { SequencerStoppedError } from '../sequencer/sequencer.ts';
import type { SubmitPort } from '../sequencer/venue-ports.ts';

/** The subject commands travel on by default. */
export const COMMAND_SUBJECT = 'bourse.commands';
/** The queue group of the engines that answer: one leader at a time subscribes. */
const ENGINE_QUEUE = 'bourse-engine';

interface CommandRequest {
  readonly id: string;
  readonly command: Command;
}

type CommandReply =
  | { readonly ok: true; readonly seq: number; readonly result: ApplyResult }
  | { readonly ok: false; readonly stopped: boolean; readonly message: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What the engine's side needs: the sequencer's submit and where its applied state stands. */
export interface CommandTarget extends SubmitPort {
  readonly appliedSeq: number;
}

export interface CommandServiceOptions {
  readonly subject?: string;
  /** How long an answered id is remembered (default 2 minutes). */
  readonly dedupWindowMs?: number;
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
    this.#dedupWindowMs = options.dedupWindowMs ?? 120_000;
    this.#sub = nc.subscribe(options.subject ?? COMMAND_SUBJECT, {
      queue: ENGINE_QUEUE,
      callback: (error, msg) => {
        if (error === null) this.#take(msg);
      },
    });
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
      answer = { at: Date.now(), reply: this.#submit(request.command) };
      this.#answers.set(request.id, answer);
    }
    void answer.reply.then((reply) => msg.respond(encodeReply(reply)));
  }

  async #submit(command: Command): Promise<CommandReply> {
    try {
      const result = await this.#target.submit(command);
      return { ok: true, seq: this.#target.appliedSeq, result };
    } catch (error) {
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
    await this.#sub.drain();
    await this.#nc.flush();
  }
}

export interface RemoteSubmitOptions {
  readonly subject?: string;
  /** How long one request waits for its answer before the command is NOT_ACCEPTED (default 5 s). */
  readonly answerTimeoutMs?: number;
  /** How long a request may keep finding no engine (a failover) before it is NOT_ACCEPTED (default 5 s). */
  readonly noEngineTimeoutMs?: number;
  /** Pause between two sends that found no engine (default 50 ms). */
  readonly retryDelayMs?: number;
}

/** Where the gateway's replica stands: the answer waits for it to reach the command's seq. */
export interface AppliedWatch {
  whenApplied(seq: number): Promise<void>;
}

/** The gateway's end: a SubmitPort that forwards to whichever engine leads. */
export class RemoteSubmit implements SubmitPort {
  readonly #nc: NatsConnection;
  readonly #replica: AppliedWatch;
  readonly #subject: string;
  readonly #answerTimeoutMs: number;
  readonly #noEngineTimeoutMs: number;
  readonly #retryDelayMs: number;

  constructor(nc: NatsConnection, replica: AppliedWatch, options: RemoteSubmitOptions = {}) {
    this.#nc = nc;
    this.#replica = replica;
    this.#subject = options.subject ?? COMMAND_SUBJECT;
    this.#answerTimeoutMs = options.answerTimeoutMs ?? 5_000;
    this.#noEngineTimeoutMs = options.noEngineTimeoutMs ?? 5_000;
    this.#retryDelayMs = options.retryDelayMs ?? 50;
  }

  /**
   * Resolves with the engine's result once the command is durable, applied, and applied on this
   * gateway's replica too. Rejects with a SequencerStoppedError (answered NOT_ACCEPTED at the
   * edge) when no engine took it in time, or one took it and did not answer in time.
   */
  readonly submit = async (command: Command): Promise<ApplyResult> => {
    const body = encoder.encode(JSON.stringify({ id: randomUUID(), command } satisfies CommandRequest));
    const giveUp = Date.now() + this.#noEngineTimeoutMs;
    for (;;) {
      let msg: Msg;
      try {
        msg = await this.#nc.request(this.#subject, body, { timeout: this.#answerTimeoutMs });
      } catch (error) {
        // No engine received it: safe to send again. Anything else: it may have been journaled.
        const noEngine = error instanceof RequestError && error.isNoResponders();
        if (noEngine && Date.now() < giveUp) {
          await new Promise((resolve) => setTimeout(resolve, this.#retryDelayMs));
          continue;
        }
        throw new SequencerStoppedError(
          noEngine
            ? 'no engine took the command (none leads)'
            : `the engine did not answer in ${this.#answerTimeoutMs} ms: the command may or may not have been applied`,
          error as Error,
        );
      }
      const reply = JSON.parse(decoder.decode(msg.data)) as CommandReply;
      if (!reply.ok) throw new SequencerStoppedError(`the engine refused the command: ${reply.message}`);
      await this.#replica.whenApplied(reply.seq);
      return reply.result;
    }
  };
}

function parseRequest(data: Uint8Array): CommandRequest {
  const value = JSON.parse(decoder.decode(data)) as Partial<CommandRequest> | null;
  if (value === null || typeof value !== 'object' || typeof value.id !== 'string' || value.id === '') {
    throw new Error('a command request is { id, command }');
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
