/**
 * @module listeners — where the API listens. The admin API on the Unix socket when one is set, else
 * adminHost:adminPort, opened before the venue recovers: it answers `/health` and `/ready` with
 * their figures, and 503 to the rest, so that a long replay is visible to monitoring instead of
 * looking dead; once the venue runs it serves the admin API (src/api/assembly.ts). The public API
 * on host:port once the venue runs, with the connection limits. And the check, before anything
 * touches the disk, that both addresses are free.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { tcpEndpoint, type Endpoint } from '../config/listen-file.ts';
import { isLoopbackHost, type ServerOptions } from '../config/options.ts';
import type { Log } from '../domain/log.ts';
import type { Health } from '../observability/health.ts';
import { withProbes } from '../observability/probes.ts';
import type { Api } from './assembly.ts';
import { errorText } from './edge/refusal.ts';
import {
  ListenError,
  listenProblem,
  probeListen,
  type ListenRole,
  type ListenTarget,
} from './http/listen-probe.ts';
import { startHttpServer, type RunningHttpServer } from './http/server.ts';
import { ADMIN_ROLE, startAdminServer, type RunningAdminServer } from './admin/admin-server.ts';

export const PUBLIC_ROLE: ListenRole = {
  what: 'the public API',
  port: '--port or BOURSE_PORT',
  host: '--host or BOURSE_HOST',
};

/** Where the admin API listens: the Unix socket when one is set, else adminHost:adminPort. */
export const adminTarget = (options: ServerOptions): ListenTarget =>
  options.adminSocket !== undefined
    ? { socket: options.adminSocket }
    : { host: options.adminHost, port: options.adminPort };

/** Throws a ListenError (one line) when the public or admin address cannot be listened on now. */
export async function refuseBusyAddresses(options: ServerOptions): Promise<void> {
  const problem =
    (await probeListen({ host: options.host, port: options.port }, PUBLIC_ROLE)) ??
    (await probeListen(adminTarget(options), ADMIN_ROLE));
  if (problem !== undefined) throw new ListenError(problem);
}

export interface AdminListener {
  readonly server: RunningAdminServer;
  /** Where it listens, as listen.json records it. */
  readonly at: Endpoint;
  /** From now on `handler` answers (the admin API, once the venue runs). */
  serve(handler: RequestListener): void;
}

/** Opens the admin listener answering the probes while the venue recovers (the module comment). */
export async function openAdminListener(
  options: ServerOptions,
  health: Health,
  log: Log,
): Promise<AdminListener> {
  let handler: RequestListener = withProbes(recoveringHandler, { health, detail: true });
  const server = await startAdminServer(adminTarget(options), (req, res) => handler(req, res));
  const at: Endpoint =
    server.target.socket !== undefined
      ? { socket: server.target.socket }
      : tcpEndpoint(server.target.host, server.target.port);
  log.info({ admin: at }, `admin API on ${'socket' in at ? `the Unix socket ${at.socket}` : at.url}`);
  if (!('socket' in at) && !isLoopbackHost(at.host)) {
    log.warn(
      { host: at.host },
      `the admin API listens on ${at.host}, not on loopback: keep that interface private`,
    );
  }
  return { server, at, serve: (next) => (handler = next) };
}

/** Listens for the public API on host:port with `api`'s handlers; a ListenError (one line) when it cannot. */
export async function listenPublic(options: ServerOptions, api: Api): Promise<RunningHttpServer> {
  const http = await startHttpServer({
    host: options.host,
    port: options.port,
    handler: api.handler,
    trustedProxies: api.trustedProxies,
    limits: {
      maxConnections: options.maxConnections,
      maxConnectionsPerIp: options.maxConnectionsPerIp,
      headersTimeoutMs: options.headersTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
    },
  }).catch((error: unknown) => {
    throw new ListenError(listenProblem({ host: options.host, port: options.port }, PUBLIC_ROLE, error));
  });
  http.server.on('upgrade', api.upgrade);
  return http;
}

/** The admin listener's answer while the venue recovers (probes are answered before it). */
function recoveringHandler(_req: IncomingMessage, res: ServerResponse): void {
  const body = errorText(
    'BUSY',
    'the server is recovering (replaying its journal): retry once /ready answers 200',
  );
  res.writeHead(503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
