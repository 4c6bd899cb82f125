/**
 * @module rest — the page's HTTP calls: the public market data, and signed calls made with the
 * signed-in key exactly as any client makes them (GET, sorted parameters, HMAC-MD5 sign, reqTime).
 */
import { signedQuery } from './sign.ts';

/** A JSON reply body, read field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** GETs a public path (`/data/v1/markets`) and parses the JSON. */
export async function getPublic(path: string): Promise<Json> {
  const response = await fetch(path, { headers: { accept: 'application/json' } });
  return response.json();
}

/** The code of a refused key: unknown, revoked, or signed with another secret. */
export const KEY_REFUSED = 1003;

/** A refusal: the reply's `code` and `message`. */
export class ApiError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** Throws an ApiError when a reply carries a code other than 1000; returns it otherwise. */
export function checked(reply: Json): Json {
  if (reply !== null && typeof reply === 'object' && !Array.isArray(reply) && 'code' in reply) {
    const code = Number(reply.code);
    if (code !== 1000)
      throw new ApiError(code, typeof reply.message === 'string' ? reply.message : `code ${code}`);
  }
  return reply;
}

/** The signed-in key: calls signed endpoints. */
export class SignedApi {
  readonly accessKey: string;
  readonly #keyHex: string;
  /** Called when the venue refuses the key itself (1003), before the call rejects. */
  onKeyRefused: (error: ApiError) => void = () => undefined;

  /** `keyHex` is sha1hex(secret): the page never keeps the secret itself. */
  constructor(accessKey: string, keyHex: string) {
    this.accessKey = accessKey;
    this.#keyHex = keyHex;
  }

  get keyHex(): string {
    return this.#keyHex;
  }

  /** Calls `/api/<method>`; resolves with the reply, or rejects with an ApiError for a refusal. */
  async call(method: string, params: readonly [string, string][] = []): Promise<Json> {
    const query = signedQuery(method, params, this.accessKey, this.#keyHex, Date.now());
    const response = await fetch(`/api/${method}?${query}`, { headers: { accept: 'application/json' } });
    try {
      return checked(await response.json());
    } catch (error) {
      if (error instanceof ApiError && error.code === KEY_REFUSED) this.onKeyRefused(error);
      throw error;
    }
  }
}
