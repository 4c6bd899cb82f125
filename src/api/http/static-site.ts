/**
 * @module static-site — serves the built trading page (web/dist, made by Vite at install) from
 * memory, in front of the API's request handler.
 *
 * Every file is read once at start-up into a map keyed by its URL path; a request is served only
 * when its path (query removed, nothing decoded) is a key of that map, so no request can name a
 * file outside the build: `..`, encoded slashes or NUL bytes are simply not keys, and fall through
 * to the API, which answers them with its JSON 404. Nothing on disk is opened per request.
 *
 * Replies: GET and HEAD (another method on a page path: 405); `Content-Type` by extension;
 * an ETag (a content hash) and 304 for a matching If-None-Match; text gzipped once at load and
 * sent to clients that accept it; Vite's content-hashed files under /assets/ cached for a year
 * (immutable), everything else (index.html) revalidated on every load (`no-cache`). Security
 * headers keep the page (which holds an API secret in its session) from being framed or sniffed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { resultBody } from './reply.ts';

/** Content types by file extension; a file of another kind is served as bytes. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
const BYTES = 'application/octet-stream';

/** Vite's content-hashed output: a changed file gets a new name, so these never need revalidating. */
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
/** Everything else (index.html names the current assets): revalidated on each load, cheap with the ETag. */
export const REVALIDATE_CACHE = 'no-cache';

/**
 * The page talks only to its own origin (HTTP and WebSocket); no inline script, no framing.
 * Inline styles are allowed because the chart library sets them.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

interface StaticFile {
  readonly body: Buffer;
  /** The gzipped body, when smaller. */
  readonly gzip: Buffer | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly etag: string;
}

/** The built page, held in memory. */
export class StaticSite {
  readonly root: string;
  readonly #files: ReadonlyMap<string, StaticFile>;

  private constructor(root: string, files: Map<string, StaticFile>) {
    this.root = root;
    this.#files = files;
  }

  /** Reads every file under `dir`; undefined when `dir` holds no index.html (the page is not built). */
  static load(dir: string): StaticSite | undefined {
    if (!existsSync(join(dir, 'index.html'))) return undefined;
    const files = new Map<string, StaticFile>();
    for (const path of walk(dir)) {
      const url = `/${relative(dir, path).split(sep).join('/')}`;
      files.set(url, staticFile(url, readFileSync(path)));
    }
    const index = files.get('/index.html') as StaticFile;
    files.set('/', index);
    return new StaticSite(dir, files);
  }

  /** URL paths served (with `/` for index.html). */
  get paths(): string[] {
    return [...this.#files.keys()].sort();
  }

  /** Answers `req` and returns true if its path is one of the page's files; false leaves it to the caller. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const file = this.#files.get(q === -1 ? url : url.slice(0, q));
    if (file === undefined) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const body = resultBody(
        'GENERAL_ERROR',
        `method ${String(req.method).slice(0, 20)} not allowed: use GET`,
      );
      res.writeHead(405, {
        Allow: 'GET, HEAD',
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
      });
      res.end(body);
      return true;
    }
    if (req.headers['if-none-match'] === file.etag) {
      res.writeHead(304, { ETag: file.etag, 'Cache-Control': file.headers['Cache-Control'] as string });
      res.end();
      return true;
    }
    const gzip = file.gzip !== undefined && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? (file.gzip as Buffer) : file.body;
    res.writeHead(200, {
      ...file.headers,
      ETag: file.etag,
      'Content-Length': body.byteLength,
      ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  }
}

function staticFile(url: string, body: Buffer): StaticFile {
  const type = CONTENT_TYPES[extname(url).toLowerCase()] ?? BYTES;
  const compressible = type.startsWith('text/') || type.includes('json') || type.includes('svg');
  const gzipped = compressible ? gzipSync(body, { level: 9 }) : undefined;
  return {
    body,
    gzip: gzipped !== undefined && gzipped.byteLength < body.byteLength ? gzipped : undefined,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    headers: {
      'Content-Type': type,
      'Cache-Control': url.startsWith('/assets/') ? IMMUTABLE_CACHE : REVALIDATE_CACHE,
      ...(compressible ? { Vary: 'Accept-Encoding' } : {}),
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      ...(type.startsWith('text/html') ? { 'Content-Security-Policy': CONTENT_SECURITY_POLICY } : {}),
    },
  };
}

/** Every regular file under `dir`, depth first; symbolic links are skipped, so nothing outside is read. */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** The reply to `/` when the page was not built. */
const NOT_BUILT = resultBody(
  'GENERAL_ERROR',
  'the trading page is not built: run npm run build:web (npm install builds it)',
);

/**
 * A request listener that serves the page's files from `site` and hands every other request to
 * `next` (the API). Without a site, `/` says how to build it (HTTP 503) and the rest goes to `next`.
 */
export function withStaticSite(
  site: StaticSite | undefined,
  next: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (site !== undefined) {
      if (!site.handle(req, res)) next(req, res);
      return;
    }
    const url = req.url ?? '/';
    if (url === '/' || url.startsWith('/?')) {
      res.writeHead(503, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(NOT_BUILT),
      });
      res.end(NOT_BUILT);
      return;
    }
    next(req, res);
  };
}
