/**
 * @module api — the console's calls to the admin API, made as the `bourse` CLI makes them: a form
 * POST to `/admin/<path>` with `Authorization: Bearer <session>` (the session an operator opened
 * with its token and, for the roles that move money, a TOTP code), answered with JSON
 * `{code, message, …}`. The probes (`/health`, `/ready`, `/metrics`) are GETs on the same listener.
 */

/** A JSON reply body, read field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** A refusal: the reply's code and message (1003: the token is wrong). */
export class AdminError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** The admin API's code for a missing or wrong token. */
export const TOKEN_REFUSED = 1003;

/** A signed-in operator: the session the server gave, who it is, and its role. */
export interface Session {
  readonly session: string;
  readonly operator: string;
  readonly role: 'viewer' | 'operator' | 'admin';
}

/** Opens a session with an operator's token (or the bootstrap admin.token) and a TOTP code. */
export async function openSession(token: string, code: string): Promise<Session> {
  const reply: Json = await new AdminApi(token).call('/admin/session/open', {
    code: code === '' ? undefined : code,
  });
  return { session: reply.session, operator: reply.operator, role: reply.role };
}

export class AdminApi {
  readonly #token: string;
  /** Called when the server refuses the token (it changed, or the server restarted with another). */
  readonly #onRefused: () => void;

  constructor(token: string, onRefused: () => void = () => undefined) {
    this.#token = token;
    this.#onRefused = onRefused;
  }

  /** POSTs `params` to `path`; resolves with the reply, or rejects with an AdminError for a refusal. */
  async call(path: string, params: Record<string, string | number | undefined> = {}): Promise<Json> {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(params))
      if (value !== undefined) form.set(name, String(value));
    const response = await fetch(path, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.#token}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form.toString(),
    });
    let reply: Json;
    try {
      reply = await response.json();
    } catch {
      throw new AdminError(0, `HTTP ${response.status} without a JSON body from ${path}`);
    }
    const code = Number(reply?.code);
    if (code !== 1000) {
      if (code === TOKEN_REFUSED) this.#onRefused();
      throw new AdminError(code, typeof reply?.message === 'string' ? reply.message : `code ${code}`);
    }
    return reply;
  }

  /** GETs a probe: `/health` or `/ready` (JSON, answered with 503 when not so) or `/metrics` (text). */
  async probe(path: '/health' | '/ready'): Promise<Json> {
    const response = await fetch(path, { headers: { authorization: `Bearer ${this.#token}` } });
    return response.json();
  }

  async metrics(): Promise<string> {
    const response = await fetch('/metrics', { headers: { authorization: `Bearer ${this.#token}` } });
    if (!response.ok) throw new AdminError(0, `/metrics answered HTTP ${response.status}`);
    return response.text();
  }
}
