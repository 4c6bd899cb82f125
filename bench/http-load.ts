/**
 * @module http-load — a lean HTTP/1.1 keep-alive load generator for bench:http.
 *
 * Why not autocannon alone: on these two cores the load generator shares the machine with the
 * server, and autocannon spends about a core at 35–40k requests/s (~27 µs a request: it parses
 * each response with a full HTTP parser and keeps per-request objects). Every microsecond it
 * spends is taken from the server it measures. This generator does only what the measurement
 * needs, so that the server, not the generator, sets the figure:
 * - `connections` TCP connections (Nagle off), each with one request outstanding at a time (no
 *   pipelining), as autocannon and wrk do by default;
 * - requests prebuilt as bytes, cycled per connection (connection k starts at request k mod n);
 * - each response read far enough to know where it ends: the status line, the headers up to the
 *   blank line, `Content-Length` (chunked bodies are read chunk by chunk), then the body; a
 *   response whose status is not 2xx, or (with `expectBody`) whose body lacks that text, counts
 *   as an error, as does a connection closed or failing mid-request (the connection is reopened);
 * - latency from the write of a request to the last byte of its response, in whole microseconds,
 *   and completed requests per second, from which the caller takes the median.
 * It runs on the caller's event loop (one thread), as autocannon does.
 */
import { connect, type Socket } from 'node:net';

export interface LoadOptions {
  readonly host: string;
  readonly port: number;
  readonly connections: number;
  readonly seconds: number;
  /** Whole requests as bytes (request line, headers, blank line, body). At least one. */
  readonly requests: readonly Buffer[];
  /** Text every response body must contain (e.g. `"code":1000`); a body without it is an error. */
  readonly expectBody?: string;
}

export interface LoadResult {
  /** Completed requests in each whole second of the run. */
  readonly perSecond: readonly number[];
  /** Every completed request's latency, µs. */
  readonly latenciesUs: Float64Array;
  readonly completed: number;
  /** Responses that were not 2xx or lacked `expectBody`. */
  readonly badResponses: number;
  /** Connections that failed or closed with a request outstanding. */
  readonly connectionErrors: number;
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');
/** How long, after the run, outstanding requests may take before their connections are cut. */
const STOP_GRACE_MS = 10_000;

/**
 * Where one HTTP/1.1 response starting at `buf[0]` ends, or -1 when more bytes are needed.
 * Throws on a response it cannot frame (no Content-Length and not chunked).
 */
export function responseEnd(buf: Buffer): number {
  const headEnd = buf.indexOf(CRLF_CRLF);
  if (headEnd === -1) return -1;
  const head = buf.toString('latin1', 0, headEnd).toLowerCase();
  const bodyStart = headEnd + 4;
  const lengthAt = head.indexOf('\r\ncontent-length:');
  if (lengthAt !== -1) {
    const lineEnd = head.indexOf('\r\n', lengthAt + 2);
    const length = Number(head.slice(lengthAt + 17, lineEnd === -1 ? undefined : lineEnd).trim());
    if (!Number.isSafeInteger(length) || length < 0) throw new Error('bad Content-Length in a response');
    return buf.length >= bodyStart + length ? bodyStart + length : -1;
  }
  if (!/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) {
    throw new Error('a response with neither Content-Length nor chunked encoding');
  }
  let at = bodyStart;
  for (;;) {
    const sizeEnd = buf.indexOf(CRLF, at);
    if (sizeEnd === -1) return -1;
    const size = parseInt(buf.toString('latin1', at, sizeEnd), 16);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error('bad chunk size in a response');
    if (size === 0) {
      // Last chunk; no trailers are expected, so the body ends at the next CRLF.
      return buf.length >= sizeEnd + 4 ? sizeEnd + 4 : -1;
    }
    at = sizeEnd + 2 + size + 2;
    if (buf.length < at) return -1;
  }
}

/** Runs the load for `seconds` and resolves once every connection is closed. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { requests, connections, seconds } = options;
  if (requests.length === 0) throw new Error('runLoad needs at least one request');
  const expect = options.expectBody === undefined ? undefined : Buffer.from(options.expectBody);
  const perSecond: number[] = [];
  let latencies = new Float64Array(1 << 20);
  let completed = 0;
  let badResponses = 0;
  let connectionErrors = 0;
  let thisSecond = 0;
  let running = true;
  const sockets = new Set<Socket>();

  const record = (latencyUs: number): void => {
    if (completed === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[completed++] = latencyUs;
    thisSecond++;
  };

  const open = (index: number): void => {
    const socket = connect(options.port, options.host);
    sockets.add(socket);
    socket.setNoDelay(true);
    let next = index % requests.length;
    let sentAt = 0;
    let outstanding = false;
    let pending: Buffer | undefined;
    const send = (): void => {
      if (!running) {
        socket.end();
        return;
      }
      outstanding = true;
      sentAt = performance.now();
      socket.write(requests[next] as Buffer);
      next = next + 1 === requests.length ? 0 : next + 1;
    };
    socket.on('connect', send);
    socket.on('data', (chunk: Buffer) => {
      const buf = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
      let end: number;
      try {
        end = responseEnd(buf);
      } catch {
        connectionErrors++;
        socket.destroy();
        return;
      }
      if (end === -1) {
        pending = buf;
        return;
      }
      pending = undefined;
      outstanding = false;
      const ok =
        buf[9] === 0x32 && // "HTTP/1.1 2xx"
        (expect === undefined || buf.subarray(buf.indexOf(CRLF_CRLF), end).includes(expect));
      if (!ok) badResponses++;
      record(Math.round((performance.now() - sentAt) * 1000));
      send();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      if (outstanding) connectionErrors++;
      if (running) open(index);
      else if (sockets.size === 0) finish();
    });
  };

  let finish: () => void = () => undefined;
  return new Promise((resolve) => {
    finish = () =>
      resolve({
        perSecond,
        latenciesUs: latencies.subarray(0, completed),
        completed,
        badResponses,
        connectionErrors,
      });
    const ticker = setInterval(() => {
      perSecond.push(thisSecond);
      thisSecond = 0;
      if (perSecond.length >= seconds) {
        clearInterval(ticker);
        running = false;
        // Every connection closes after its outstanding response (send() ends it); one that
        // gets no answer within STOP_GRACE_MS is destroyed, and counts as an error.
        setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, STOP_GRACE_MS).unref();
        if (sockets.size === 0) finish();
      }
    }, 1000);
    for (let i = 0; i < connections; i++) open(i);
  });
}
