import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { createRequestHandler, startHttpServer, type RunningHttpServer } from './server.ts';
import {
  CONSOLE_HOME,
  CONSOLE_SCOPE,
  IMMUTABLE_CACHE,
  REVALIDATE_CACHE,
  StaticSite,
  withStaticSite,
} from './static-site.ts';

const root = mkdtempSync(join(tmpdir(), 'bourse-static-'));
const dist = join(root, 'dist');
const INDEX = `<!doctype html><html><head><title>Bourse</title></head><body>${'<p>x</p>'.repeat(50)}</body></html>`;
const SCRIPT = `console.log(${JSON.stringify('bourse '.repeat(200))});`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw request (node:http sends the path exactly as given: no normalisation of `..`). */
function get(server: RunningHttpServer, path: string, method = 'GET', headers: Record<string, string> = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method,
        headers: { 'user-agent': 'Mozilla/5.0', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const CONSOLE_INDEX = '<!doctype html><html><head><title>Bourse operator console</title></head></html>';
const CONSOLE_SCRIPT = 'console.log("the console");';

let site: RunningHttpServer;
let bare: RunningHttpServer;
/** The console's part of the same build, in front of an admin API. */
let consoleSite: RunningHttpServer;
let bareConsole: RunningHttpServer;

before(async () => {
  mkdirSync(join(dist, 'assets'), { recursive: true });
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dist, 'assets', 'index-AbC123.js'), SCRIPT);
  writeFileSync(join(dist, 'assets', 'logo-1.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  mkdirSync(join(dist, 'admin', 'assets'), { recursive: true });
  writeFileSync(join(dist, 'admin', 'index.html'), CONSOLE_INDEX);
  writeFileSync(join(dist, 'admin', 'assets', 'console-XyZ9.js'), CONSOLE_SCRIPT);
  writeFileSync(join(root, 'secret.txt'), 'do not serve');
  symlinkSync(join(root, 'secret.txt'), join(dist, 'assets', 'link.txt'));
  const api = createRequestHandler([{ path: '/data/v1/ping', handler: () => ({ json: { pong: true } }) }]);
  site = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler: withStaticSite(StaticSite.load(dist), api),
  });
  bare = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler: withStaticSite(StaticSite.load(join(root, 'missing')), api),
  });
  const adminApi = createRequestHandler([
    { path: '/admin/venue', handler: () => ({ json: { code: 1000, message: 'success' } }) },
  ]);
  consoleSite = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler: withStaticSite(StaticSite.load(dist, CONSOLE_SCOPE), adminApi, CONSOLE_HOME),
  });
  bareConsole = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    handler: withStaticSite(StaticSite.load(join(root, 'missing'), CONSOLE_SCOPE), adminApi, CONSOLE_HOME),
  });
});

after(async () => {
  await site.close();
  await bare.close();
  await consoleSite.close();
  await bareConsole.close();
  rmSync(root, { recursive: true, force: true });
});

describe('the static site', () => {
  test('serves index.html at / with its type, revalidation and security headers', async () => {
    for (const path of ['/', '/index.html', '/?market=btc_usdt']) {
      const r = await get(site, path);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(r.headers['cache-control'], REVALIDATE_CACHE);
      assert.equal(r.headers['x-content-type-options'], 'nosniff');
      assert.equal(r.headers['x-frame-options'], 'DENY');
      assert.match(String(r.headers['content-security-policy']), /default-src 'self'/);
      assert.equal(r.body.toString(), INDEX);
    }
  });

  test('assets: content types, a year of caching, an ETag that answers 304, gzip when accepted, HEAD', async () => {
    const js = await get(site, '/assets/index-AbC123.js');
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers['cache-control'], IMMUTABLE_CACHE);
    assert.equal(js.body.toString(), SCRIPT);
    const etag = String(js.headers['etag']);
    assert.match(etag, /^"[\w-]+"$/);
    const again = await get(site, '/assets/index-AbC123.js', 'GET', { 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);

    const zipped = await get(site, '/assets/index-AbC123.js', 'GET', { 'accept-encoding': 'gzip, br' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.ok(zipped.body.length < SCRIPT.length);
    assert.equal(gunzipSync(zipped.body).toString(), SCRIPT);

    assert.equal((await get(site, '/favicon.svg')).headers['content-type'], 'image/svg+xml');
    const png = await get(site, '/assets/logo-1.png', 'GET', { 'accept-encoding': 'gzip' });
    assert.equal(png.headers['content-type'], 'image/png');
    assert.equal(png.headers['content-encoding'], undefined, 'images are not gzipped');

    const head = await get(site, '/');
    const headOnly = await get(site, '/', 'HEAD');
    assert.equal(headOnly.status, 200);
    assert.equal(headOnly.headers['content-length'], head.headers['content-length']);
    assert.equal(headOnly.body.length, 0);
  });

  test('no path reaches a file outside the build; unknown paths get the API JSON 404', async () => {
    for (const path of [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '//secret.txt',
      '/assets//index-AbC123.js',
      '/index.html%00.js',
      '/INDEX.HTML',
      '/assets/',
      '/assets',
      '/assets/link.txt',
      '/assets/missing.js',
      '/etc/passwd',
    ]) {
      const r = await get(site, path);
      assert.equal(r.status, 404, path);
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8', path);
      assert.equal(JSON.parse(r.body.toString()).code, 1001, path);
      assert.doesNotMatch(r.body.toString(), /do not serve/);
    }
  });

  test('the API still answers beside the page; other methods on a page path are 405', async () => {
    assert.deepEqual(JSON.parse((await get(site, '/data/v1/ping')).body.toString()), { pong: true });
    const post = await get(site, '/', 'POST');
    assert.equal(post.status, 405);
    assert.equal(post.headers['allow'], 'GET, HEAD');
    assert.equal(JSON.parse(post.body.toString()).code, 1001);
  });

  test('without a build, / says how to build it and the API works', async () => {
    assert.equal(StaticSite.load(join(root, 'missing')), undefined);
    const r = await get(bare, '/');
    assert.equal(r.status, 503);
    assert.match(JSON.parse(r.body.toString()).message, /npm run build:web/);
    assert.equal((await get(bare, '/data/v1/ping')).status, 200);
  });

  test('the page leaves the console out: /admin and its files are not served, whatever the spelling', async () => {
    const paths = StaticSite.load(dist)?.paths ?? [];
    assert.deepEqual(
      paths.filter((p) => p.startsWith('/admin')),
      [],
    );
    for (const path of [
      '/admin',
      '/admin/',
      '/admin/index.html',
      '/admin/assets/console-XyZ9.js',
      '/admin/?x=1',
      '//admin/index.html',
      '/assets/../admin/index.html',
    ]) {
      const r = await get(site, path);
      assert.equal(r.status, 404, path);
      assert.doesNotMatch(r.body.toString(), /operator console|the console/, path);
    }
  });

  test('the console site serves /admin and its files only, in front of the admin API', async () => {
    assert.deepEqual(StaticSite.load(dist, CONSOLE_SCOPE)?.paths, [
      '/admin',
      '/admin/',
      '/admin/assets/console-XyZ9.js',
      '/admin/index.html',
    ]);
    for (const path of ['/admin', '/admin/', '/admin/index.html', '/admin?token=no']) {
      const r = await get(consoleSite, path);
      assert.equal(r.status, 200, path);
      assert.equal(r.body.toString(), CONSOLE_INDEX, path);
      assert.equal(r.headers['cache-control'], REVALIDATE_CACHE);
      assert.match(String(r.headers['content-security-policy']), /frame-ancestors 'none'/);
    }
    const script = await get(consoleSite, '/admin/assets/console-XyZ9.js');
    assert.equal(script.body.toString(), CONSOLE_SCRIPT);
    assert.equal(script.headers['cache-control'], IMMUTABLE_CACHE);
    for (const path of ['/', '/index.html', '/favicon.svg', '/assets/index-AbC123.js']) {
      assert.equal((await get(consoleSite, path)).status, 404, path);
    }
    assert.equal(JSON.parse((await get(consoleSite, '/admin/venue')).body.toString()).code, 1000);
  });

  test('without a build, /admin says the console is not built and the admin API works', async () => {
    assert.equal(StaticSite.load(join(root, 'missing'), CONSOLE_SCOPE), undefined);
    for (const path of ['/admin', '/admin/', '/admin?x']) {
      const r = await get(bareConsole, path);
      assert.equal(r.status, 503, path);
      assert.match(
        JSON.parse(r.body.toString()).message,
        /operator console is not built: run npm run build:web/,
      );
    }
    assert.equal((await get(bareConsole, '/admin/venue')).status, 200);
  });
});
