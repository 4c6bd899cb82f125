/**
 * @module probes — `/health`, `/ready` and `/metrics` in front of a listener's own routes: no
 * User-Agent rule and no token (probes and scrapers are machines), GET or HEAD only, JSON for the
 * first two (200 or 503) and the Prometheus text format for the third. On the admin listener the
 * answers carry every check's figures; on the public one only the status (docs/operations.md,
 * "Health and readiness").
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Log } from '../domain/log.ts';
import type { Health } from './health.ts';
import type { VenueMetrics } from './metrics.ts';

export interface ProbeOptions {
  readonly health: Health;
  /** Every check's figures (the admin listener), or the status alone (the public one). */
  readonly detail: boolean;
  /** Serve `/metrics` from these (absent: `/metrics` goes to the routes behind, as any path). */
  readonly metrics?: VenueMetrics | undefined;
  /** A failed scrape is logged here. */
  readonly log?: Log;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** `inner` with the probe paths answered first (see the module comment). */
export function withProbes(inner: RequestListener, options: ProbeOptions): RequestListener {
  const { health, detail, metrics } = options;
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    // Most requests are /api/… or /data/…: one character tells them apart from the probe paths.
    const second = url.charCodeAt(1);
    if (second !== 104 && second !== 114 && second !== 109) {
      inner(req, res);
      return;
    }
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path !== '/health' && path !== '/ready' && (path !== '/metrics' || metrics === undefined)) {
      inner(req, res);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(res, 405, JSON_TYPE, JSON.stringify({ code: 1001, message: `use GET or HEAD on ${path}` }));
      return;
    }
    if (path === '/health') {
      const alive = health.alive();
      const body = detail ? alive : { status: alive.status };
      send(res, alive.status === 'alive' ? 200 : 503, JSON_TYPE, JSON.stringify(body));
      return;
    }
    if (path === '/ready') {
      const report = health.ready();
      const body = detail ? report : { ready: report.ready };
      send(res, report.ready ? 200 : 503, JSON_TYPE, JSON.stringify(body));
      return;
    }
    (metrics as VenueMetrics).scrape().then(
      ({ text, contentType }) => send(res, 200, contentType, text),
      (error: unknown) => {
        options.log?.error({ err: error }, 'a /metrics scrape failed');
        send(res, 503, 'text/plain; charset=utf-8', 'metrics unavailable: the server log says why\n');
      },
    );
  };
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
