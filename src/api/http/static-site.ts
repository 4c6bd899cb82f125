/**
 * @module static-site — serves the built trading page (web/dist, made by Vite at install) from
 * memory, in front of the API's request handler; and, from the same build, the operator console
 * (web/dist/admin/) in front of the admin API. Each listener loads only its part of the build
 * (a `SiteScope`): the public one leaves out `/admin/`, the admin one serves only `/admin/`.
 *
 * Every file is read once at start-up into a map keyed by its URL path; a request is served only
 * when its path (query removed, nothing decoded) is a key of that map, so no request can name a
 * file outside the build: `..`, encoded slashes or NUL bytes are simply not keys, and fall through
 * to the API, which answers them with its JSON 404. Nothing on disk is opened per request.
 *
 * Replies: GET and HEAD (another method on a page path: 405); `Content-Type` by extension;
 * an ETag (a content hash) and 304 for a matching If-None-Match; text gzipped once at load and
 * sent to clients that accept it; Vite's content-hashed files under /assets/ (and /admin/assets/)
 * cached for a year (immutable), everything else (index.html) revalidated on every load
 * (`no-cache`). Security headers keep the page (which holds an API secret in its session) and the
 * console (the admin token) from being framed or sniffed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { errorText } from '../edge/refusal.ts';

/** The built trading page and operator console (Vite's output; `npm install` builds it, see web/). */
export const WEB_DIST = join(import.meta.dirname, '..', '..', '..', 'web', 'dist');

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

/** The part of the build a site serves, by URL folder. */
export interface SiteScope {
  /** The folder served, with its index.html at the folder's path with and without the slash. */
  readonly under: string;
  /** Folders inside `under` left out. */
  readonly except?: readonly string[];
}

/** The operator console's folder in the build (web/admin/index.html, built to dist/admin/). */
export const CONSOLE_PATH = '/admin/';
/** The trading page: the whole build but the console. */
export const PAGE_SCOPE: SiteScope = { under: '/', except: [CONSOLE_PATH] };
/** The operator console, served at `/admin` on the admin listener. */
export const CONSOLE_SCOPE: SiteScope = { under: CONSOLE_PATH };

/** The built page (or console), held in memory. */
export class StaticSite {
  readonly root: string;
  readonly #files: ReadonlyMap<string, StaticFile>;

  private constructor(root: string, files: Map<string, StaticFile>) {
    this.root = root;
    this.#files = files;
  }

  /**
   * Reads every file of `scope` under `dir`; undefined when the scope's folder holds no index.html
   * (the page is not built).
   */
  static load(dir: string, scope: SiteScope = PAGE_SCOPE): StaticSite | undefined {
    const { under, except = [] } = scope;
    if (!existsSync(join(dir, ...under.split('/'), 'index.html'))) return undefined;
    const files = new Map<string, StaticFile>();
    for (const path of walk(dir)) {
      const url = `/${relative(dir, path).split(sep).join('/')}`;
      if (!url.startsWith(under) || except.some((folder) => url.startsWith(folder))) continue;
      files.set(url, staticFile(url, readFileSync(path)));
    }
    const index = files.get(`${under}index.html`) as StaticFile;
    files.set(under, index);
    if (under !== '/') files.set(under.slice(0, -1), index);
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
      const body = errorText(
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
      'Cache-Control': /^(\/admin)?\/assets\//.test(url) ? IMMUTABLE_CACHE : REVALIDATE_CACHE,
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

/** What a site is called in the reply to its home path when it was not built. */
export interface SiteHome {
  /** The home path (`/`, or `/admin` for the console, also answered with a trailing slash). */
  readonly path: string;
  readonly what: string;
}

const PAGE_HOME: SiteHome = { path: '/', what: 'the trading page' };
export const CONSOLE_HOME: SiteHome = { path: '/admin', what: 'the operator console' };

/**
 * A request listener that serves the page's files from `site` and hands every other request to
 * `next` (the API). Without a site, its home path says how to build it (HTTP 503) and the rest
 * goes to `next`.
 */
export function withStaticSite(
  site: StaticSite | undefined,
  next: (req: IncomingMessage, res: ServerResponse) => void,
  home: SiteHome = PAGE_HOME,
): (req: IncomingMessage, res: ServerResponse) => void {
  const notBuilt = errorText(
    'GENERAL_ERROR',
    `${home.what} is not built: run npm run build:web (npm install builds it)`,
  );
  const homes = home.path === '/' ? ['/'] : [home.path, `${home.path}/`];
  return (req, res) => {
    if (site !== undefined) {
      if (!site.handle(req, res)) next(req, res);
      return;
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    if (homes.includes(q === -1 ? url : url.slice(0, q))) {
      res.writeHead(503, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(notBuilt),
      });
      res.end(notBuilt);
      return;
    }
    next(req, res);
  };
}
