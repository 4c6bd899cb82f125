/**
 * The operator's first hour against the real venue: the admin API on its own listener (loopback
 * TCP or a Unix socket) and not on the public one, listen.json written and removed, the CLI
 * finding the server from the data directory alone, a busy address refused in one line before
 * anything is created on disk, and `--help`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { writeMasterKeyFile } from '../../src/config/master-key.ts';
import { ListenError } from '../../src/api/http/listen-probe.ts';
import { readListenFile } from '../../src/config/listen-file.ts';
import type { ServerOptions } from '../../src/config/options.ts';
import { CONSOLE_SCOPE, StaticSite, WEB_DIST } from '../../src/api/http/static-site.ts';
import { startVenue, type RunningVenue } from '../../src/main.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { runBourse, type CliRun } from '../fixtures/cli.ts';
import { spawnNode } from '../fixtures/children.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { testVenueOptions } from '../fixtures/venue-options.ts';

fileTimeLimit(import.meta.url);

const ROOT = join(import.meta.dirname, '..', '..');
const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'bourse-admin-'));
  roots.push(root);
  return root;
}

function options(root: string, extra: Partial<ServerOptions> = {}): ServerOptions {
  const masterKeyFile = join(root, 'master.key');
  if (!existsSync(masterKeyFile)) writeMasterKeyFile(masterKeyFile);
  // No demo market: the tests count users of their own.
  return testVenueOptions({ dataDir: join(root, 'data'), masterKeyFile, ...extra });
}

interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** A POST over TCP (`http://host:port`) or a Unix socket, with an optional bearer token. */
function post(where: { url: string } | { socket: string }, path: string, token?: string): Promise<Reply> {
  const url = 'url' in where ? new URL(where.url) : undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method: 'POST',
        path,
        ...(url === undefined
          ? { socketPath: (where as { socket: string }).socket }
          : { host: url.hostname, port: Number(url.port) }),
        headers: {
          'user-agent': 'Mozilla/5.0 test',
          'content-type': 'application/x-www-form-urlencoded',
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const cli = (argv: string[], env: Record<string, string>): Promise<CliRun> => runBourse(argv, { env });

const tokenOf = (venue: RunningVenue): string =>
  readFileSync(join(venue.options.dataDir, 'admin.token'), 'utf8').trim();

describe('the admin listener', () => {
  test('admin routes answer on the admin listener only; the public one treats them as unknown paths', async () => {
    const root = tempRoot();
    const venue = await startVenue(options(root), SILENT_LOG);
    try {
      const token = tokenOf(venue);
      const record = readListenFile(venue.options.dataDir);
      assert.ok(record !== undefined && 'url' in record.admin);
      assert.equal(record.pid, process.pid);
      assert.equal(record.public.port, venue.http.port);
      assert.equal(record.admin.host, '127.0.0.1');
      assert.notEqual(record.admin.port, venue.http.port);
      assert.equal(statSync(join(venue.options.dataDir, 'listen.json')).mode & 0o777, 0o600);
      const admin = { url: record.admin.url };
      const publicApi = { url: record.public.url };

      const state = await post(admin, '/admin/state', token);
      assert.equal(state.status, 200);
      assert.equal(state.body.code, 1000);
      assert.equal(typeof state.body.stateHash, 'string');

      for (const path of ['/admin/state', '/admin/users/create', '/admin/instance']) {
        const refused = await post(publicApi, path, token);
        assert.equal(refused.status, 404, path);
        assert.deepEqual(refused.body, { code: 1001, message: `no endpoint at ${path}` });
      }
      // The token is still required on the admin listener.
      const anonymous = await post(admin, '/admin/users/create');
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.code, 1003);
      // And the public API is not served there.
      assert.equal((await post(admin, '/data/v1/markets')).status, 404);
    } finally {
      await venue.close();
    }
    assert.equal(existsSync(join(root, 'data', 'listen.json')), false, 'listen.json removed on a clean stop');
  });

  test('the operator console is served at /admin on the admin listener only, never on the public one', async () => {
    const root = tempRoot();
    const venue = await startVenue(options(root), SILENT_LOG);
    try {
      const record = readListenFile(venue.options.dataDir);
      assert.ok(record !== undefined && 'url' in record.admin);
      const get = async (base: string, path: string): Promise<{ status: number; text: string }> => {
        const r = await fetch(`${base}${path}`, { headers: { 'user-agent': 'Mozilla/5.0 test' } });
        return { status: r.status, text: await r.text() };
      };
      const built = StaticSite.load(WEB_DIST, CONSOLE_SCOPE);
      const files = (built?.paths ?? []).filter((p) => p.startsWith('/admin/'));
      if (built === undefined) {
        // Not built (npm install builds it): /admin says so, on the admin listener.
        const r = await get(record.admin.url, '/admin');
        assert.equal(r.status, 503);
        assert.match(r.text, /the operator console is not built/);
      } else {
        const index = readFileSync(join(WEB_DIST, 'admin', 'index.html'), 'utf8');
        for (const path of ['/admin', '/admin/']) {
          const r = await get(record.admin.url, path);
          assert.equal(r.status, 200, path);
          assert.equal(r.text, index, path);
        }
        assert.ok(
          files.some((p) => p.endsWith('.js')),
          `the console's script is served: ${files.join(' ')}`,
        );
      }
      // The public listener serves the trading page, and nothing of the console.
      for (const path of ['/admin', '/admin/', ...files]) {
        const r = await get(record.public.url, path);
        assert.equal(r.status, 404, path);
        assert.deepEqual(JSON.parse(r.text), { code: 1001, message: `no endpoint at ${path}` });
      }
    } finally {
      await venue.close();
    }
  });

  test('the CLI finds the server from BOURSE_DATA alone; key create names the permissions or is refused', async () => {
    const root = tempRoot();
    const venue = await startVenue(options(root), SILENT_LOG);
    try {
      const env = { BOURSE_DATA: venue.options.dataDir, BOURSE_PORT: String(venue.http.port) };
      assert.deepEqual(await cli(['user', 'create', 'alice'], env), {
        code: 0,
        out: 'user alice created with id 1\n',
        err: '',
      });
      const key = await cli(['key', 'create', 'alice', '--perms', 'asset,entrust', '--ip', '10.0.0.1'], env);
      assert.equal(key.code, 0, key.err);
      assert.match(key.out, /permissions: asset, entrust\nbound to: 10\.0\.0\.1\n/);
      const json = await cli(['key', 'create', 'alice', '--perms', 'money', '--json'], env);
      assert.deepEqual(JSON.parse(json.out).permissions, ['money']);
      const before = await cli(['state'], env);
      const missing = await cli(['key', 'create', 'alice'], env);
      assert.equal(missing.code, 2);
      assert.match(missing.err, /key create needs --perms/);
      // The route refuses a missing perms too, for callers other than the CLI.
      const record = readListenFile(venue.options.dataDir);
      assert.ok(record !== undefined && 'url' in record.admin);
      const direct = await post(
        { url: `${record.admin.url}` },
        '/admin/keys/create?user=alice',
        tokenOf(venue),
      );
      assert.equal(direct.body.code, 3005);
      assert.match(
        String(direct.body.message),
        /perms is required: a comma list of asset \(account and bills\)/,
      );
      assert.equal((await cli(['state'], env)).out, before.out, 'refusals change nothing');
    } finally {
      await venue.close();
    }
  });

  test('--admin-socket: the admin API on a Unix socket (mode 0600), found by the CLI; a stale socket is replaced', async () => {
    const root = tempRoot();
    const socket = join(root, 'admin.sock');
    // A socket file left by a killed server: nobody accepts on it.
    const child = spawn(
      process.execPath,
      ['-e', `require('node:net').createServer().listen(${JSON.stringify(socket)}, () => console.log('up'))`],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    assert.ok(lstatSync(socket).isSocket());

    const venue = await startVenue(options(root, { adminSocket: socket }), SILENT_LOG);
    try {
      assert.equal(statSync(socket).mode & 0o777, 0o600);
      assert.deepEqual(readListenFile(venue.options.dataDir)?.admin, { socket });
      assert.equal((await post({ socket }, '/admin/state', tokenOf(venue))).body.code, 1000);
      assert.equal((await post({ socket }, '/admin/state')).status, 401);
      const r = await cli(['state', '--data', venue.options.dataDir], {});
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /^seq \d+, state hash /);
      // A second venue cannot take a socket that is in use, and creates nothing.
      const other = tempRoot();
      await assert.rejects(
        startVenue(options(other, { adminSocket: socket }), SILENT_LOG),
        (e: Error) =>
          e instanceof ListenError && /Unix socket .* another server is listening there/.test(e.message),
      );
      assert.equal(existsSync(join(other, 'data')), false);
    } finally {
      await venue.close();
    }
    assert.equal(existsSync(socket), false, 'the socket file goes with the server');
  });
});

/** Runs `node src/main.ts <args>` with its configuration directory under `root`; resolves when it exits. */
function runServer(root: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawnNode([join(ROOT, 'src', 'main.ts'), ...args], {
      env: { XDG_CONFIG_HOME: join(root, 'config') },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => resolve({ code, out, err }));
  });
}

describe('starting', () => {
  test('a busy port is one line on stderr, before anything is created on disk', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const root = tempRoot();
      const r = await runServer(root, [
        '--data',
        join(root, 'data'),
        '--port',
        String(port),
        '--admin-port',
        '0',
      ]);
      assert.equal(r.code, 1, r.err);
      assert.equal(
        r.err,
        `bourse: cannot start: cannot listen on 127.0.0.1:${port} for the public API: the port is in use ` +
          '(by another Bourse or another program); choose another with --port or BOURSE_PORT\n',
      );
      assert.deepEqual(readdirSync(root), [], 'no data directory, no master key');

      // The same check in process, for each kind of address problem.
      for (const [extra, what] of [
        [{ adminPort: port }, /for the admin API: the port is in use .*--admin-port/],
        [
          { adminHost: '192.0.2.1' },
          /cannot listen on 192\.0\.2\.1:0 for the admin API: this machine has no interface with that address; choose another with --admin-host/,
        ],
        [{ adminSocket: '/nonexistent/dir/admin.sock' }, /the directory \/nonexistent\/dir does not exist/],
        [
          { adminSocket: `/tmp/${'s'.repeat(120)}.sock` },
          /the path is 130 bytes long, and a socket path may have at most 10[37]/,
        ],
      ] as const) {
        const data = join(tempRoot(), 'data');
        const keyFile = join(tempRoot(), 'master.key');
        const settings = testVenueOptions({ dataDir: data, masterKeyFile: keyFile, ...extra });
        await assert.rejects(
          startVenue(settings, SILENT_LOG),
          (e: Error) => e instanceof ListenError && what.test(e.message),
        );
        assert.equal(existsSync(data), false, JSON.stringify(extra));
      }
    } finally {
      busy.close();
    }
  });

  test('--help lists every flag with its environment variable, and starts nothing', async () => {
    const root = tempRoot();
    const r = await runServer(root, ['--data', join(root, 'data'), '--help']);
    assert.equal(r.code, 0);
    for (const [flag, env] of [
      ['--host', 'BOURSE_HOST'],
      ['--port', 'BOURSE_PORT'],
      ['--admin-host', 'BOURSE_ADMIN_HOST'],
      ['--admin-port', 'BOURSE_ADMIN_PORT'],
      ['--admin-socket', 'BOURSE_ADMIN_SOCKET'],
      ['--data', 'BOURSE_DATA'],
      ['--rate-limits', 'BOURSE_RATE_LIMITS'],
    ]) {
      assert.match(r.out, new RegExp(`\n  ${flag}[ [].* ${env} `), flag);
    }
    assert.deepEqual(readdirSync(root), []);
  });
});
