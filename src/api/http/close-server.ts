/**
 * @module close-server — how an HTTP listener stops (the public API's and the admin API's):
 * it accepts nothing new, closes its idle keep-alive connections at once, answers each request
 * that still arrives on a busy one with `Connection: close`, and after `graceMs` closes whatever
 * is left. Without the last two a client sending requests back to back on one keep-alive
 * connection would hold the stop open for ever (a stepped-down engine seen alive ten minutes
 * after it said it exits: issue 30).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** How long requests in flight get to be answered once a listener stops (ms). */
export const CLOSE_GRACE_MS = 2_000;

/** Stops `server`; resolves once every connection has closed (at the latest `graceMs` from now). */
export function closeServer(server: Server, graceMs = CLOSE_GRACE_MS): Promise<void> {
  const lastOnIt = (_req: IncomingMessage, res: ServerResponse): void => {
    res.shouldKeepAlive = false;
  };
  server.prependListener('request', lastOnIt);
  const force = setTimeout(() => server.closeAllConnections(), graceMs);
  force.unref();
  return new Promise<void>((done, fail) => {
    server.close((error) => {
      clearTimeout(force);
      if (error === undefined) done();
      else fail(error);
    });
    server.closeIdleConnections();
  });
}
