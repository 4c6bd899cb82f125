/**
 * @module audit-log — the record of every admin action (docs/operations.md, "Audit log"): when,
 * which action, its parameters with secrets redacted, its result, and the journal commands it
 * submitted with the journal position around them. Kept in an append-only file of JSON lines in
 * the data directory, each line fdatasync'ed before the action goes on.
 *
 * Why a file of its own and not a view of the journal: a journal command does not say who sent it
 * (an operator's credit and the chain watcher's, a user's cancel and an operator's, are the same
 * commands); several actions journal nothing (a snapshot, the simulated chain, lifting a rate-limit
 * lock) and a refused action usually journals nothing either, yet the operator wants to see it;
 * and journal segments may be pruned after a snapshot. Each entry names the commands it submitted
 * and the journal position before and after, so that it can be checked against the journal,
 * which stays the authority on what changed.
 *
 * Two lines an action: `begin` before it runs, `end` with its result. An action whose `end` is
 * missing (the server stopped while it ran) is listed with the result unknown: look in the journal
 * after its position.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { closeSync, existsSync, fdatasyncSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ResultName } from '../../domain/result-codes.ts';

/** The audit log's file in the data directory. */
export const AUDIT_FILE = 'audit.jsonl';

/** A parameter value longer than this is cut (characters). */
const MAX_PARAM_CHARS = 200;

/** Parameters whose value is a secret: recorded as `[redacted]` (the access log's names, and sealed values). */
const SECRET_PARAM = /pass|pwd|secret|token|sign|seal/i;

export const REDACTED = '[redacted]';

/** A command the action submitted, and the engine's result. */
export interface AuditCommand {
  readonly type: string;
  readonly result: ResultName;
}

/** One admin action. */
export interface AuditEntry {
  /** 1, 2, 3, … in the order the actions began. */
  readonly id: number;
  /** When it began (wall clock, ms). */
  readonly time: number;
  /** The admin API path without `/admin/`, e.g. `users/create`. */
  readonly action: string;
  /** Who did it: the operator's name (operators.ts; `admin.token` for the bootstrap token), or undefined in entries older than named operators. */
  readonly operator?: string | undefined;
  /** The parameters as given, secrets redacted; a repeated one as a list. */
  readonly params: Readonly<Record<string, string | readonly string[]>>;
  /** The admin API's answer code (1000 success), or undefined when the action never finished. */
  readonly code: number | undefined;
  readonly message: string;
  /** The journaled commands it submitted, in order. */
  readonly commands: readonly AuditCommand[];
  /** The journal's last sequence number before it ran and after it answered (others' may be between). */
  readonly seqBefore: number;
  readonly seqAfter: number | undefined;
  /** How long it took (ms), or undefined when it never finished. */
  readonly ms: number | undefined;
}

/** Where audit entries go and come from. */
export interface AuditLog {
  /** Records that an action begins; returns its id. */
  begin(entry: Pick<AuditEntry, 'time' | 'action' | 'operator' | 'params' | 'seqBefore'>): number;
  /** Records the action's result. */
  end(id: number, result: Pick<AuditEntry, 'code' | 'message' | 'commands' | 'seqAfter' | 'ms'>): void;
  /** Entries newest first, from `offset`, at most `limit`; `total` counts all. */
  list(limit: number, offset: number): { total: number; entries: AuditEntry[] };
  close(): void;
}

/** The parameters of a request as an audit entry keeps them. */
export function auditParams(
  params: readonly { readonly name: string; readonly value: string }[],
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const { name, value } of params) {
    const kept = SECRET_PARAM.test(name)
      ? REDACTED
      : value.length > MAX_PARAM_CHARS
        ? `${value.slice(0, MAX_PARAM_CHARS)}…`
        : value;
    const before = out[name];
    out[name] = before === undefined ? kept : [...(Array.isArray(before) ? before : [before]), kept];
  }
  return out;
}

/** The commands submitted inside the current action (see `collectCommands`). */
const submitted = new AsyncLocalStorage<AuditCommand[]>();

/** Runs `action`, collecting every command `noteCommand` is told of while it runs. */
export async function collectCommands<T>(
  action: () => Promise<T>,
): Promise<{ value: T; commands: AuditCommand[] }> {
  const commands: AuditCommand[] = [];
  const value = await submitted.run(commands, action);
  return { value, commands };
}

/** Tells the current action (if any) of a command it submitted. */
export function noteCommand(command: AuditCommand): void {
  submitted.getStore()?.push(command);
}

type Line =
  | ({ readonly t: 'begin'; readonly id: number } & Pick<
      AuditEntry,
      'time' | 'action' | 'operator' | 'params' | 'seqBefore'
    >)
  | ({ readonly t: 'end'; readonly id: number } & Pick<
      AuditEntry,
      'code' | 'message' | 'commands' | 'seqAfter' | 'ms'
    >);

/** Folds lines into entries in id order; a line that does not parse (a torn last write) is skipped. */
function entriesOf(text: string): AuditEntry[] {
  const byId = new Map<number, AuditEntry>();
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      continue;
    }
    if (line.t === 'begin') {
      byId.set(line.id, {
        id: line.id,
        time: line.time,
        action: line.action,
        operator: line.operator,
        params: line.params,
        seqBefore: line.seqBefore,
        code: undefined,
        message: 'no result recorded: the server stopped while it ran (see the journal after seqBefore)',
        commands: [],
        seqAfter: undefined,
        ms: undefined,
      });
    } else if (line.t === 'end') {
      const begun = byId.get(line.id);
      if (begun !== undefined) {
        byId.set(line.id, {
          ...begun,
          code: line.code,
          message: line.message,
          commands: line.commands,
          seqAfter: line.seqAfter,
          ms: line.ms,
        });
      }
    }
  }
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/**
 * The audit log in a file: appended to, each line made durable (fdatasync) before the call
 * returns. Listing reads the file (admin actions are few: thousands a year, not millions).
 */
export class FileAuditLog implements AuditLog {
  readonly #path: string;
  #fd: number;
  #nextId: number;

  constructor(path: string) {
    this.#path = path;
    const existed = existsSync(path);
    const text = existed ? readFileSync(path, 'utf8') : '';
    this.#nextId = (entriesOf(text).at(-1)?.id ?? 0) + 1;
    this.#fd = openSync(path, 'a', 0o600);
    // A new file's name must be durable too, or a crash could lose the whole log.
    if (!existed) fsyncDirectory(dirname(path));
    // A torn last line (a crash mid-write) would swallow the next one: start on a fresh line.
    if (text !== '' && !text.endsWith('\n')) this.#write('\n');
  }

  begin(entry: Pick<AuditEntry, 'time' | 'action' | 'operator' | 'params' | 'seqBefore'>): number {
    const id = this.#nextId++;
    this.#write(`${JSON.stringify({ t: 'begin', id, ...entry })}\n`);
    return id;
  }

  end(id: number, result: Pick<AuditEntry, 'code' | 'message' | 'commands' | 'seqAfter' | 'ms'>): void {
    this.#write(`${JSON.stringify({ t: 'end', id, ...result })}\n`);
  }

  list(limit: number, offset: number): { total: number; entries: AuditEntry[] } {
    const all = entriesOf(readFileSync(this.#path, 'utf8'));
    const newestFirst = all.reverse();
    return { total: newestFirst.length, entries: newestFirst.slice(offset, offset + limit) };
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }

  #write(text: string): void {
    writeSync(this.#fd, text);
    fdatasyncSync(this.#fd);
  }
}

/** An audit log in memory (tests, and venues without a data directory). */
export class MemoryAuditLog implements AuditLog {
  readonly #lines: string[] = [];
  #nextId = 1;

  begin(entry: Pick<AuditEntry, 'time' | 'action' | 'operator' | 'params' | 'seqBefore'>): number {
    const id = this.#nextId++;
    this.#lines.push(JSON.stringify({ t: 'begin', id, ...entry }));
    return id;
  }

  end(id: number, result: Pick<AuditEntry, 'code' | 'message' | 'commands' | 'seqAfter' | 'ms'>): void {
    this.#lines.push(JSON.stringify({ t: 'end', id, ...result }));
  }

  list(limit: number, offset: number): { total: number; entries: AuditEntry[] } {
    const all = entriesOf(this.#lines.join('\n')).reverse();
    return { total: all.length, entries: all.slice(offset, offset + limit) };
  }

  close(): void {}
}

/** Makes a directory's entries durable (the new file's name). */
function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
