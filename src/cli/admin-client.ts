/**
 * @module admin-client — the CLI's requests to the admin API, over TCP (`http://host:port`) or a
 * Unix socket, as form POSTs answered with JSON.
 */
import { request } from 'node:http';

/** Where the admin API is: a base URL, or a Unix socket path. */
export type AdminTarget = { readonly url: string } | { readonly socket: string };

/** The target for people: the URL, or `unix:<path>`. */
export const describeTarget = (target: AdminTarget): string =>
  'url' in target ? target.url : `unix:${target.socket}`;

/** A reply longer than this is not an admin reply (bytes). */
const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** How long the CLI waits for an answer (ms): `chain mine 10000` takes seconds on a busy machine. */
const REPLY_TIMEOUT_MS = 180_000;

/**
 * POSTs `form` to `path` and resolves with the JSON body. The token, when given, goes in the
 * Authorization header. Rejects with an Error saying what failed (unreachable, timeout, not JSON).
 */
export function postAdmin(
  target: AdminTarget,
  path: string,
  form: readonly (readonly [string, string])[],
  token: string | undefined,
): Promise<Record<string, unknown>> {
  const body = new URLSearchParams(form.map(([k, v]): [string, string] => [k, v])).toString();
  const where = 'url' in target ? new URL(target.url) : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method: 'POST',
        path,
        ...(where === undefined
          ? { socketPath: (target as { socket: string }).socket }
          : {
              host: where.hostname.replace(/^\[|\]$/g, ''),
              port: where.port === '' ? 80 : Number(where.port),
            }),
        headers: {
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'Mozilla/5.0 (compatible; bourse-cli)',
        },
        timeout: REPLY_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_REPLY_BYTES) req.destroy(new Error(`reply larger than ${MAX_REPLY_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          try {
            const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            if (typeof value !== 'object' || value === null) throw new Error('not an object');
            resolve(value as Record<string, unknown>);
          } catch {
            reject(new Error(`HTTP ${res.statusCode ?? '?'} without a JSON body: is it a Bourse admin API?`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer in ${REPLY_TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}
