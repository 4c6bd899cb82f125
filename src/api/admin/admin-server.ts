/**
 * @module admin-server — the admin API's own listener: loopback TCP or a Unix socket, apart from
 * the public listener, so that the operator reaches the server whatever the public load (the
 * public listener's connection limits and queues do not apply here). Every route still needs the
 * admin token.
 */
import { closeServer } from '../http/close-server.ts';
import { chmodSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { answerClientError } from '../http/server.ts';
import {
  listenProblem,
  ListenError,
  socketAnswers,
  type ListenRole,
  type ListenTarget,
} from '../http/listen-probe.ts';

/** Idle admin connections are closed after this long (ms): the CLI makes one request a call. */
const ADMIN_KEEP_ALIVE_TIMEOUT_MS = 5_000;

/** A slow admin request is given up after this long (ms): `chain mine 10000` takes a few seconds. */
const ADMIN_REQUEST_TIMEOUT_MS = 120_000;

export const ADMIN_ROLE: ListenRole = {
  what: 'the admin API',
  port: '--admin-port or BOURSE_ADMIN_PORT (or --admin-socket)',
  host: '--admin-host or BOURSE_ADMIN_HOST',
  socket: '--admin-socket or BOURSE_ADMIN_SOCKET',
};

export interface RunningAdminServer {
  readonly server: Server;
  /** Where it listens: the TCP interface and the port actually bound, or the socket path. */
  readonly target: ListenTarget;
  /** Stops accepting, closes idle connections, resolves once all have closed, within close-server.ts's grace (the socket file goes too). */
  close(): Promise<void>;
}

/**
 * Listens on `target` with `handler`. A Unix socket gets mode 0600 (owner only) before the promise
 * resolves; a socket file left by a killed server is replaced, a live one is refused. Rejects with
 * a ListenError (one line) when the address cannot be listened on.
 */
export async function startAdminServer(
  target: ListenTarget,
  handler: RequestListener,
): Promise<RunningAdminServer> {
  const server = createServer({ requestTimeout: ADMIN_REQUEST_TIMEOUT_MS }, handler);
  server.keepAliveTimeout = ADMIN_KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', answerClientError);
  if (target.socket !== undefined) {
    if (await socketAnswers(target.socket)) {
      throw new ListenError(listenProblem(target, ADMIN_ROLE, { code: 'EADDRINUSE' }));
    }
    // Nobody accepts on it: a socket file left by a server that was killed.
    rmSync(target.socket, { force: true });
  }
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(new ListenError(listenProblem(target, ADMIN_ROLE, error)));
    const listening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    if (target.socket !== undefined) server.listen(target.socket, listening);
    else server.listen(target.port, target.host, listening);
  });
  let bound = target;
  if (target.socket !== undefined) chmodSync(target.socket, 0o600);
  else {
    const address = server.address();
    if (typeof address === 'object' && address !== null) bound = { host: target.host, port: address.port };
  }
  return {
    server,
    target: bound,
    close: () => closeServer(server),
  };
}
