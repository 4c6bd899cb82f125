/**
 * @module operators — who may use the admin API (docs/operations.md, "Operators"): named operators
 * with a role each, instead of one shared token.
 *
 * - **Roles.** `viewer` reads (every read-only path); `operator` also acts on users and funds
 *   (freeze, credit, cancel orders, revoke keys, approve withdrawals, …); `admin` also changes the
 *   venue (coins, markets: fees, closing), manages operators, snapshots, the demo and the clock. A
 *   call beyond the caller's role is refused (PERMISSION_DENIED, HTTP 403) and changes nothing.
 * - **Second factor.** The roles that move money (`operator`, `admin`) open a session with their
 *   token and a TOTP code (RFC 6238, totp.ts); a viewer with the token alone. Each code is taken
 *   once; five wrong codes in a row lock the operator out for five minutes.
 * - **Sessions.** `POST /admin/session/open` answers a session token, good for SESSION_MS, kept in
 *   memory (a restart signs everyone out, as it should after an upgrade). Every other call sends
 *   `Authorization: Bearer <session>`.
 * - **The bootstrap token.** `admin.token` in the data directory (created on first start, mode
 *   0600) is the host's own key: the `bourse` CLI on the server sends it, and it acts as the
 *   operator `admin.token` with the admin role, no second factor (reading the file already takes
 *   the server's account). It creates the first named operators.
 *
 * Operators are kept in `operators.json` in the data directory (mode 0600, replaced atomically),
 * beside `admin.token`, and not journaled: who may call the admin API is the server's access
 * control, not venue state, and it must not be replayed into another venue from its journal. A
 * standby takes a copy of the file with `admin.token`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { writeAtomic } from '../../config/data-dir.ts';
import type { ApiRequest } from '../http/types.ts';
import { fail } from './admin-reply.ts';
import { base32Decode, newTotpSecret, otpauthUri, verifyTotp } from './totp.ts';
import { quoted } from '../edge/refusal.ts';

/** The file of named operators in the data directory. */
export const OPERATORS_FILE = 'operators.json';

export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];
const RANK: Readonly<Record<Role, number>> = { viewer: 0, operator: 1, admin: 2 };

/** The roles that move money: they open a session with a TOTP code as well as their token. */
export const SECOND_FACTOR_ROLES: ReadonlySet<Role> = new Set(['operator', 'admin']);

/** The name the bootstrap token acts under (in the audit log). */
export const BOOTSTRAP_OPERATOR = 'admin.token';

/** How long a session lasts (ms). */
export const SESSION_MS = 8 * 60 * 60_000;
/** Wrong codes in a row before a lock-out, and how long it lasts (ms). */
export const MAX_CODE_FAILURES = 5;
export const CODE_LOCK_MS = 5 * 60_000;

/** An operator's name: lowercase letters, digits, `.`, `_` and `-`, starting with a letter. */
export const OPERATOR_NAME = /^[a-z][a-z0-9._-]{0,31}$/;

/**
 * The paths only an admin may call (beyond them, an operator may call any action, a viewer only
 * the read-only paths): the venue's own configuration, operators, snapshots, the demo, the clock.
 */
export const ADMIN_ONLY_PATHS: ReadonlySet<string> = new Set([
  '/admin/coins/add',
  '/admin/coins/change',
  '/admin/markets/add',
  '/admin/markets/change',
  '/admin/markets/close',
  '/admin/keys/reissue',
  '/admin/snapshot',
  '/admin/demo/stop',
  '/admin/clock/advance',
  '/admin/operators/list',
  '/admin/operators/add',
  '/admin/operators/remove',
]);

/** The role a path needs, given the paths that only read. */
export function roleNeeded(path: string, readOnly: ReadonlySet<string>): Role {
  if (ADMIN_ONLY_PATHS.has(path)) return 'admin';
  return readOnly.has(path) ? 'viewer' : 'operator';
}

/** Whether `role` may do what `needed` may. */
export const roleAllows = (role: Role, needed: Role): boolean => RANK[role] >= RANK[needed];

/** A named operator as stored: the token's hash only, the TOTP secret for the money roles. */
export interface OperatorRecord {
  readonly name: string;
  readonly role: Role;
  /** sha256 of the token, hex. */
  readonly tokenHash: string;
  /** The TOTP secret (base32), or null for a viewer. */
  readonly totpSecret: string | null;
  readonly created: number;
}

/** Where operators are kept. */
export interface OperatorStore {
  all(): readonly OperatorRecord[];
  /** Adds or replaces the operator of that name. */
  put(record: OperatorRecord): void;
  /** Whether there was one to remove. */
  remove(name: string): boolean;
}

export class MemoryOperatorStore implements OperatorStore {
  #records: OperatorRecord[] = [];
  all(): readonly OperatorRecord[] {
    return this.#records;
  }
  put(record: OperatorRecord): void {
    this.#records = [...this.#records.filter((r) => r.name !== record.name), record];
  }
  remove(name: string): boolean {
    const before = this.#records.length;
    this.#records = this.#records.filter((r) => r.name !== name);
    return this.#records.length < before;
  }
}

/** Operators in a JSON file (mode 0600), rewritten atomically on each change. */
export class FileOperatorStore implements OperatorStore {
  readonly #path: string;
  readonly #memory = new MemoryOperatorStore();

  constructor(path: string) {
    this.#path = path;
    if (!existsSync(path)) return;
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { operators?: OperatorRecord[] };
    for (const r of parsed.operators ?? []) {
      if (!OPERATOR_NAME.test(r.name) || !(ROLES as readonly string[]).includes(r.role)) {
        throw new Error(`${path}: operator ${JSON.stringify(r.name)} has no valid name or role`);
      }
      this.#memory.put(r);
    }
  }
  all(): readonly OperatorRecord[] {
    return this.#memory.all();
  }
  put(record: OperatorRecord): void {
    this.#memory.put(record);
    this.#save();
  }
  remove(name: string): boolean {
    const removed = this.#memory.remove(name);
    if (removed) this.#save();
    return removed;
  }
  #save(): void {
    writeAtomic(this.#path, `${JSON.stringify({ operators: this.#memory.all() }, null, 2)}\n`, 0o600);
  }
}

/** Who sends a request. */
export interface Operator {
  readonly name: string;
  readonly role: Role;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The bearer token of a request, or ''. */
export function bearer(request: ApiRequest): string {
  const header = request.headers['authorization'];
  return typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7).trim() : '';
}

/** The operators, their sessions and their second factor. */
export class OperatorAccess {
  readonly #bootstrap: string;
  readonly #store: OperatorStore;
  readonly #now: () => number;
  /** sha256(session token) → who and until when. */
  readonly #sessions = new Map<string, Operator & { readonly expires: number }>();
  /** The last TOTP step each operator used (a code is taken once). */
  readonly #usedStep = new Map<string, number>();
  readonly #failures = new Map<string, { count: number; until: number }>();

  constructor(options: { bootstrapToken: string; store: OperatorStore; now?: () => number }) {
    this.#bootstrap = options.bootstrapToken;
    this.#store = options.store;
    this.#now = options.now ?? Date.now;
  }

  /** Who sends `request`: the bootstrap token's operator, or a live session's; undefined otherwise. */
  who(request: ApiRequest): Operator | undefined {
    const token = bearer(request);
    if (token === '') return undefined;
    if (sameText(token, this.#bootstrap)) return { name: BOOTSTRAP_OPERATOR, role: 'admin' };
    const key = sha256(token);
    const session = this.#sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expires <= this.#now()) {
      this.#sessions.delete(key);
      return undefined;
    }
    return { name: session.name, role: session.role };
  }

  /**
   * A session for the holder of `token` (an operator's, or the bootstrap token), with `code` for
   * the roles that move money. Refusals: AUTH_FAILED (unknown token, wrong or reused code),
   * RATE_LIMITED (locked out after wrong codes).
   */
  openSession(token: string, code: string): { session: string; expires: number } & Operator {
    const now = this.#now();
    let operator: Operator;
    if (token !== '' && sameText(token, this.#bootstrap)) {
      operator = { name: BOOTSTRAP_OPERATOR, role: 'admin' };
    } else {
      const hash = sha256(token);
      const record = this.#store.all().find((r) => sameText(r.tokenHash, hash));
      if (token === '' || record === undefined) {
        fail('AUTH_FAILED', "unknown operator token: give the token 'bourse operators add' showed");
      }
      if (record.totpSecret !== null) this.#secondFactor(record.name, record.totpSecret, code, now);
      operator = { name: record.name, role: record.role };
    }
    const session = randomBytes(32).toString('hex');
    const expires = now + SESSION_MS;
    this.#sessions.set(sha256(session), { ...operator, expires });
    return { session, expires, ...operator };
  }

  #secondFactor(name: string, secret: string, code: string, now: number): void {
    const failures = this.#failures.get(name);
    if (failures !== undefined && failures.until > now) {
      fail(
        'RATE_LIMITED',
        `too many wrong codes for ${name}: try again after ${new Date(failures.until).toISOString()}`,
      );
    }
    if (code === '') {
      fail('AUTH_FAILED', `${name} moves money: give the 6-digit code of your authenticator app too`);
    }
    const step = verifyTotp(base32Decode(secret) ?? Buffer.alloc(0), code, now, this.#usedStep.get(name));
    if (step === undefined) {
      // After a lock-out has passed, the count starts again.
      const count = (failures !== undefined && failures.until === 0 ? failures.count : 0) + 1;
      this.#failures.set(name, { count, until: count >= MAX_CODE_FAILURES ? now + CODE_LOCK_MS : 0 });
      fail(
        'AUTH_FAILED',
        'wrong or used code: give the current 6-digit code of your authenticator app (check its clock)',
      );
    }
    this.#usedStep.set(name, step);
    this.#failures.delete(name);
  }

  /** Ends the request's session (the bootstrap token has none); whether there was one. */
  closeSession(request: ApiRequest): boolean {
    return this.#sessions.delete(sha256(bearer(request)));
  }

  list(): readonly OperatorRecord[] {
    return this.#store.all();
  }

  /**
   * A new operator, or a new token (and second factor) for an existing one: the token and the
   * TOTP secret are answered once and kept only as a hash and in the file.
   */
  add(
    name: string,
    role: Role,
    replace: boolean,
  ): { token: string; totpSecret: string | null; otpauth: string | null } {
    if (!OPERATOR_NAME.test(name) || name === BOOTSTRAP_OPERATOR) {
      fail(
        'INVALID_PARAMETER',
        `operator name ${quoted(name)} must be 1 to 32 lowercase letters, digits, '.', '_' or '-', starting with a letter`,
      );
    }
    const exists = this.#store.all().some((r) => r.name === name);
    if (exists && !replace) {
      fail('INVALID_PARAMETER', `operator ${name} exists: give replace=true for a new token and code`);
    }
    if (!exists && replace) fail('UNKNOWN_REFERENCE', `no operator named '${name}'`);
    const token = randomBytes(32).toString('hex');
    const totpSecret = SECOND_FACTOR_ROLES.has(role) ? newTotpSecret() : null;
    this.#store.put({ name, role, tokenHash: sha256(token), totpSecret, created: this.#now() });
    this.#dropSessions(name);
    return {
      token,
      totpSecret,
      otpauth: totpSecret === null ? null : otpauthUri('Bourse', name, totpSecret),
    };
  }

  /** Removes an operator and ends its sessions. */
  remove(name: string): void {
    if (!this.#store.remove(name)) fail('UNKNOWN_REFERENCE', `no operator named ${quoted(name)}`);
    this.#dropSessions(name);
  }

  #dropSessions(name: string): void {
    for (const [key, s] of this.#sessions) if (s.name === name) this.#sessions.delete(key);
    this.#usedStep.delete(name);
    this.#failures.delete(name);
  }
}
