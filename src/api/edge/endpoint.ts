/**
 * @module endpoint — what an endpoint declares about its parameters, and the one loop that reads
 * them: `params` maps each parameter name to its reader (readers.ts), the handler receives their
 * values as `args`, typed from the declaration (hono's validator, fastify's schema-first routes).
 * Transport-neutral: the caller says where a parameter's text comes from (an HTTP request's query
 * and form, a WebSocket message's fields), so every transport serves the same declaration.
 */
import type { Reader, ReaderVenue } from './readers.ts';

/** An endpoint's parameters: name → reader, read in this order (so the first bad one is reported). */
export type Params = Readonly<Record<string, Reader<unknown>>>;

/** The values of declared parameters. */
export type Args<P extends Params> = { readonly [K in keyof P]: P[K] extends Reader<infer T> ? T : never };

/** Where a transport finds a parameter's text: `undefined` when absent or empty. */
export type TextOf<S> = (source: S, name: string) => string | undefined;

/**
 * Reads every declared parameter of `source` into one object (the only allocation), or throws the
 * first reader's Refusal. Parameters a request carries beyond the declaration are ignored (but
 * were signed), as the real API ignored them.
 */
export function readArgs<P extends Params, S>(
  params: P,
  venue: ReaderVenue,
  source: S,
  textOf: TextOf<S>,
): Args<P> {
  const args: Record<string, unknown> = {};
  for (const name in params)
    args[name] = (params[name] as Reader<unknown>).read(venue, name, textOf(source, name));
  return args as Args<P>;
}
