/**
 * @module server — the HTTP front door on raw node:http: exact-path routing, GET query strings and
 * POST form bodies parsed into ordered parameters, the User-Agent rule, and JSON replies.
 *
 * Per-request work is kept to what the contract needs (no framework, no middleware chain): one
 * Map lookup, one parameter scan, one `writeHead` + `end`. The target is ≥ 30k signed orders/s and
 * ≥ 50k cached public reads/s on 2 cores (performance-anchors §9), where node's own HTTP stack
 * already costs ~11 µs per request.
 *
 * Replies (docs/market-data.md, "HTTP server"):
 * - a route's reply: HTTP 200 (or the reply's `status`), `{body}` bytes and `{text}` written as-is,
 *   `{json}` through `JSON.stringify`; `Content-Type: application/json; charset=utf-8`;
 * - refusals of a request the server understands are HTTP 200 with `{"code":<n>,"message":"…"}`,
 *   as the real API did (zb-api-facts §2): a missing or (strict mode) non-browser User-Agent, a
 *   POST body that is not a form → 3005 (INVALID_PARAMETER); so is an unknown `/api/<method>`;
 * - any other unknown path → HTTP 404, code 1001; a method other than GET or POST → HTTP 405,
 *   code 1001; an HTTP/1.1 request without Host → HTTP 400, code 3005; a body over the limit →
 *   HTTP 413, code 3005, and the connection is closed;
 * - a route that throws or rejects → logged, HTTP 200 with code 1002 (INTERNAL_ERROR); one cut
 *   short because the venue stopped (its journal failed) → 1009 (NOT_ACCEPTED), not logged again.
 *   The process never crashes on a request and never answers with an HTML page.
 *
 * Logging (docs/operations.md, "Logs"): a failing route at `error`; a routed request slower than
 * `slowRequestMs` at `warn`; with `accessLog`, every routed request at `info` (the admin listener,
 * whose requests are few and each an operator's action), a refusal with its reason, and the
 * `quietPaths` at `debug`. Nothing per request otherwise.
 */
import { closeServer } from './close-server.ts';
import {
  createServer,
  maxHeaderSize,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import { TrustedProxies } from './client-ip.ts';
import {
  ConnectionGuard,
  DEFAULT_CONNECTION_LIMITS,
  serverTimeouts,
  type ConnectionLimits,
} from './connection-guard.ts';
import type { Log } from '../../domain/log.ts';
import { SequencerStoppedError } from '../../sequencer/sequencer.ts';
import { parseParams } from './params.ts';
import { errorText } from '../edge/refusal.ts';
import type { ApiReply, ApiRequest, RequestParam, Route, RouteHandler } from './types.ts';

/** The largest form body accepted (bytes). An order is ~200 B; a full orderMoreV2 batch ~1 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

/** The prefix a browser-style User-Agent starts with (every major browser sends it). */
export const BROWSER_USER_AGENT_PREFIX = 'Mozilla/';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';
/** The signed API's paths: an unknown method there is answered as the real API did (HTTP 200). */
const SIGNED_API_PREFIX = '/api/';

/**
 * Whether a Content-Type names the form type: its media type (before any `;` parameters such as
 * `charset=UTF-8`) equal to it in any letter case; `application/x-www-form-urlencodedX` is not.
 */
export function isFormContentType(type: string): boolean {
  const semicolon = type.indexOf(';');
  const media = (semicolon === -1 ? type : type.slice(0, semicolon)).trim();
  return media.toLowerCase() === FORM_CONTENT_TYPE;
}

export interface RequestHandlerOptions {
  /**
   * Refuse User-Agents that do not start with `Mozilla/` (the interface asks for a browser-style
   * agent). Off by default: ccxt and most SDKs send their own agent (`node-fetch`, `python-requests`),
   * and a missing User-Agent is refused either way.
   */
  readonly strictUserAgent?: boolean;
  /** Default DEFAULT_MAX_BODY_BYTES. */
  readonly maxBodyBytes?: number;
  /** Where handler failures, slow requests and the access log go (default: nowhere). */
  readonly log?: Log;
  /** A routed request answered after this many ms is logged at warn (0 or absent: never). */
  readonly slowRequestMs?: number;
  /**
   * Log every routed request at info: method, path, status, code, ms, parameters (secrets
   * hidden), and for a refusal its reason (the reply's message).
   */
  readonly accessLog?: boolean;
  /** Paths whose access lines go at debug: calls a tool makes on every run (the CLI's `/admin/instance`). */
  readonly quietPaths?: ReadonlySet<string>;
  /** Wall clock for `ApiRequest.receivedAt` (default Date.now). */
  readonly now?: () => number;
  /** Proxies whose X-Forwarded-For names the client (default none: the socket's address). */
  readonly trustedProxies?: TrustedProxies;
}

/**
 * A node:http request listener serving `routes`. Paths must be unique (a duplicate throws here,
 * at start-up, rather than silently shadowing a route). See the module comment for the replies.
 */
export function createRequestHandler(
  routes: readonly Route[],
  options: RequestHandlerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const table = new Map<string, RouteHandler>();
  for (const route of routes) {
    if (table.has(route.path)) throw new Error(`duplicate route ${route.path}`);
    table.set(route.path, route.handler);
  }
  const strictUserAgent = options.strictUserAgent ?? false;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const log = options.log;
  const now = options.now ?? Date.now;
  const proxies = options.trustedProxies ?? new TrustedProxies();
  const slowMs = options.slowRequestMs ?? 0;
  const accessLog = options.accessLog === true && log !== undefined;
  const timed = (slowMs > 0 && log !== undefined) || accessLog;
  const quietPaths = options.quietPaths ?? new Set<string>();

  const tooLargeBody = errorText('INVALID_PARAMETER', `request body larger than ${maxBodyBytes} bytes`);
  const notFormBody = errorText(
    'INVALID_PARAMETER',
    `a POST body must be ${FORM_CONTENT_TYPE} (name=value&…), or the parameters sent in the query string`,
  );
  const missingHostBody = errorText(
    'INVALID_PARAMETER',
    'missing Host header: an HTTP/1.1 request must carry one (the host it was sent to)',
  );
  const missingAgentBody = errorText(
    'INVALID_PARAMETER',
    'missing User-Agent header: every request must carry a browser-style User-Agent (e.g. Mozilla/5.0 …)',
  );
  const internalBody = errorText('INTERNAL_ERROR');
  const notAcceptedBody = errorText('NOT_ACCEPTED');

  const failed = (res: ServerResponse, method: string, path: string, error: unknown): void => {
    // A stopped venue is logged once where it stops, not again by every request it cut short.
    const stopped = error instanceof SequencerStoppedError;
    if (stopped) log?.debug({ method, path }, `${method} ${truncate(path)}: ${error.message}`);
    else log?.error({ method, path, err: error }, `${method} ${truncate(path)} failed: answered 1002`);
    if (res.headersSent) res.destroy();
    else send(res, 200, stopped ? notAcceptedBody : internalBody);
  };

  /** The slow-request and access lines for a routed request, once answered. */
  const answered = (request: ApiRequest, status: number, reply: ApiReply | undefined): void => {
    const ms = now() - request.receivedAt;
    const slow = slowMs > 0 && ms >= slowMs;
    if (!slow && !accessLog) return;
    const json = reply !== undefined && 'json' in reply ? reply.json : undefined;
    const code =
      typeof json === 'object' && json !== null && 'code' in json
        ? (json as { code: unknown }).code
        : undefined;
    const message = typeof json === 'object' && json !== null && 'message' in json ? json.message : undefined;
    const refusal = code !== undefined && code !== 1000 && typeof message === 'string' ? message : undefined;
    const fields = {
      method: request.method,
      path: request.path,
      status,
      code,
      ms,
      ip: request.ip,
      ...(accessLog ? { params: shownParams(request.params) } : {}),
      ...(accessLog && refusal !== undefined ? { reason: refusal } : {}),
    };
    const line =
      refusal === undefined
        ? `${request.method} ${truncate(request.path)}`
        : `${request.method} ${truncate(request.path)} refused (${String(code)}): ${truncate(refusal)}`;
    if (slow) log?.warn(fields, `slow request: ${request.method} ${truncate(request.path)} took ${ms} ms`);
    else if (quietPaths.has(request.path)) log?.debug(fields, line);
    else log?.info(fields, line);
  };

  const write = (res: ServerResponse, request: ApiRequest, reply: ApiReply): void => {
    let body: string | Uint8Array | undefined;
    try {
      body =
        'body' in reply
          ? reply.body
          : 'text' in reply
            ? reply.text
            : (JSON.stringify(reply.json) as string | undefined);
      if (body === undefined) throw new Error('the reply has no body, text or JSON value');
    } catch (error) {
      failed(res, request.method, request.path, error);
      if (timed) answered(request, 200, undefined);
      return;
    }
    send(res, reply.status ?? 200, body);
    if (timed) answered(request, reply.status ?? 200, reply);
  };

  const dispatch = (res: ServerResponse, handler: RouteHandler, request: ApiRequest): void => {
    let reply: ApiReply | Promise<ApiReply>;
    try {
      reply = handler(request);
    } catch (error) {
      failed(res, request.method, request.path, error);
      if (timed) answered(request, 200, undefined);
      return;
    }
    // Synchronous replies (cached market data) skip the microtask hop of a promise.
    if (reply instanceof Promise) {
      reply.then(
        (r) => write(res, request, r),
        (error: unknown) => {
          failed(res, request.method, request.path, error);
          if (timed) answered(request, 200, undefined);
        },
      );
    } else {
      write(res, request, reply);
    }
  };

  return function handleRequest(req: IncomingMessage, res: ServerResponse): void {
    const method = req.method ?? '';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    try {
      const handler = table.get(path);
      if (handler === undefined) {
        if (path.startsWith(SIGNED_API_PREFIX)) {
          send(
            res,
            200,
            errorText(
              'INVALID_PARAMETER',
              `unknown method '${truncate(path.slice(SIGNED_API_PREFIX.length))}': no endpoint at ${truncate(path)}`,
            ),
          );
        } else send(res, 404, errorText('GENERAL_ERROR', `no endpoint at ${truncate(path)}`));
        return;
      }
      if (method !== 'GET' && method !== 'POST') {
        res.setHeader('Allow', 'GET, POST');
        send(res, 405, errorText('GENERAL_ERROR', `method ${truncate(method)} not allowed: use GET or POST`));
        return;
      }
      if (req.headers.host === undefined && req.httpVersion === '1.1') {
        sendAndClose(res, 400, missingHostBody);
        return;
      }
      const agent = req.headers['user-agent'];
      if (agent === undefined || agent === '') {
        send(res, 200, missingAgentBody);
        return;
      }
      if (strictUserAgent && !agent.startsWith(BROWSER_USER_AGENT_PREFIX)) {
        send(
          res,
          200,
          errorText(
            'INVALID_PARAMETER',
            `User-Agent '${truncate(agent)}' refused: a browser-style User-Agent ` +
              `(starting with '${BROWSER_USER_AGENT_PREFIX}') is required`,
          ),
        );
        return;
      }
      const params: RequestParam[] = [];
      if (q !== -1) parseParams(url.slice(q + 1), params);
      const request: ApiRequest = {
        method,
        path,
        params,
        ip: proxies.clientAddress(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for']),
        headers: req.headers,
        receivedAt: now(),
      };
      if (method === 'GET') {
        dispatch(res, handler, request);
        return;
      }
      const type = req.headers['content-type'];
      if (type !== undefined && !isFormContentType(type)) {
        send(res, 200, notFormBody);
        return;
      }
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > maxBodyBytes) {
        sendAndClose(res, 413, tooLargeBody);
        return;
      }
      readBody(req, maxBodyBytes, (body) => {
        if (body === undefined) {
          sendAndClose(res, 413, tooLargeBody);
          return;
        }
        try {
          if (body.length > 0) parseParams(body, params);
        } catch (error) {
          failed(res, method, path, error);
          return;
        }
        dispatch(res, handler, request);
      });
    } catch (error) {
      failed(res, method, path, error);
    }
  };
}

/**
 * Collects a body up to `limit` bytes and calls `done` once: with its UTF-8 text, or with
 * `undefined` as soon as it grows past the limit (the rest is discarded). A request that errors
 * or aborts calls nothing: there is nobody left to answer.
 */
function readBody(req: IncomingMessage, limit: number, done: (body: string | undefined) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  req.on('data', (chunk: Buffer) => {
    if (finished) return;
    size += chunk.length;
    if (size > limit) {
      finished = true;
      chunks.length = 0;
      done(undefined);
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () => {
    if (finished) return;
    finished = true;
    const first = chunks[0];
    done(
      chunks.length === 0
        ? ''
        : chunks.length === 1 && first !== undefined
          ? first.toString('utf8')
          : Buffer.concat(chunks, size).toString('utf8'),
    );
  });
  req.on('error', () => {
    finished = true;
  });
}

function send(res: ServerResponse, status: number, body: string | Uint8Array): void {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  res.writeHead(status, { 'Content-Type': JSON_CONTENT_TYPE, 'Content-Length': length });
  res.end(body);
}

/** Answers and then closes the connection (the rest of an oversize body is not read). */
function sendAndClose(res: ServerResponse, status: number, body: string): void {
  res.setHeader('Connection', 'close');
  send(res, status, body);
}

/** Parameter names whose values never reach a log line (`code`: an operator's one-time sign-in code). */
const SECRET_PARAM = /pass|pwd|secret|token|sign|totp|^code$/i;

/** A request's parameters for the access log, secret values replaced by `***`. */
function shownParams(params: readonly RequestParam[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of params) out[p.name] = SECRET_PARAM.test(p.name) ? '***' : truncate(p.value);
  return out;
}

/** Echoed client text is cut short so that an error body stays small. */
function truncate(text: string): string {
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

/**
 * Answers a request the HTTP parser itself rejected (malformed, headers too large) or that did not
 * arrive in time, with a small JSON body, and closes the connection: never an HTML page. A
 * `clientError` listener; `limits` names the timeouts in the 408's message.
 */
export function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Socket,
  limits?: Pick<ConnectionLimits, 'headersTimeoutMs' | 'requestTimeoutMs'>,
): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, body] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          '431 Request Header Fields Too Large',
          errorText('INVALID_PARAMETER', `request headers larger than ${maxHeaderSize} bytes`),
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [
            '408 Request Timeout',
            errorText(
              'GENERAL_ERROR',
              'request not received in time' +
                (limits === undefined
                  ? ''
                  : ` (headers within ${limits.headersTimeoutMs} ms, the whole request within ${limits.requestTimeoutMs} ms)`),
            ),
          ]
        : ['400 Bad Request', errorText('INVALID_PARAMETER', 'malformed HTTP request')];
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  // A peer that does not read its answer is not waited for.
  socket.destroySoon();
}

export interface HttpServerOptions {
  readonly host: string;
  /** 0 picks a free port (see `RunningHttpServer.port`). */
  readonly port: number;
  readonly handler: RequestListener;
  /** Connection limits and timeouts; each one not given is DEFAULT_CONNECTION_LIMITS'. */
  readonly limits?: Partial<ConnectionLimits>;
  /** Proxies exempt from the per-address connection limit (their clients are many). */
  readonly trustedProxies?: TrustedProxies;
}

export interface RunningHttpServer {
  readonly server: Server;
  readonly host: string;
  /** The port actually bound. */
  readonly port: number;
  /** The per-address connection counts and what was refused. */
  readonly guard: ConnectionGuard;
  /** Stops accepting, closes idle keep-alive connections, and resolves once all have closed (close-server.ts: within a grace). */
  close(): Promise<void>;
}

/**
 * Listens on `host:port` with keep-alive and Nagle off, within `limits` (connection-guard.ts):
 * connections in total and per address, and the headers, request and keep-alive timeouts.
 * Requests the HTTP parser itself rejects (malformed, headers too large) and requests not received
 * in time are answered with a small JSON body and the connection closed, never with an HTML page.
 */
export function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
  const server = createServer(
    // Host is checked by the handler, which answers JSON (node's own check answers an empty 400).
    { keepAlive: true, noDelay: true, requireHostHeader: false, ...serverTimeouts(limits) },
    options.handler,
  );
  const guard = new ConnectionGuard(server, limits, options.trustedProxies);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(error, socket, limits),
  );
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : options.port;
      resolve({
        server,
        host: options.host,
        port,
        guard,
        close: () => closeServer(server),
      });
    });
  });
}
