/**
 * Issue 32, one assembly: the embedded server (`npm start`'s src/main.ts, on a JetStream journal)
 * and a `bourse gateway` on its stream, started with the same flags, serve the same API because
 * both build it with src/api/assembly.ts: `--strict-user-agent` refuses a non-browser agent on
 * both, `--slow-request-ms` logs a slow request on both, and both answer the health probes and
 * the trading page's home alike. Before the assembly the gateway ignored all three.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';
import { startRole, type RoleProcess } from '../fixtures/role-process.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { until } from '../fixtures/until.ts';

fileTimeLimit(import.meta.url, 5 * 60_000);

/** Requests taking at least this long are logged: the test's slow request waits three times as long. */
const SLOW_MS = 100;
const SAME_FLAGS = ['--strict-user-agent', '--slow-request-ms', String(SLOW_MS), '--rate-limits=false'];
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) bourse-same-flags';

const skip = natsSkipReason();
const root = mkdtempSync(join(tmpdir(), 'bourse-same-flags-'));
let nats: NatsServer | undefined;
let server: ServerProcess | undefined;
let gateway: RoleProcess | undefined;

before(async () => {
  if (skip !== false) return;
  nats = await startNatsServer();
  mkdirSync(join(root, 'keys'), { mode: 0o700 });
  const keyFile = join(root, 'keys', 'master.key');
  writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  const journalUrl = `${nats.url}?stream=SAME_${process.pid}&subject=same.journal&monitor=${nats.monitorUrl}`;
  const flags = ['--journal-url', journalUrl, '--master-key-file', keyFile, ...SAME_FLAGS];
  const dataDir = join(root, 'server');
  server = await startServer(dataDir, flags);
  gateway = await startRole('gateway', ['--data', dataDir, '--port', '0', ...flags]);
});

after(async () => {
  await gateway?.kill();
  await server?.kill();
  await nats?.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A POST whose body is sent `waitMs` after its headers: the server times a request from its headers. */
function slowPost(base: string, path: string, waitMs: number): Promise<{ status: number; body: string }> {
  const url = new URL(path, base);
  const body = 'currency=btc_usdt';
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'user-agent': BROWSER,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(Buffer.byteLength(body)),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.flushHeaders();
    setTimeout(() => req.end(body), waitMs);
  });
}

const get = async (base: string, path: string, agent: string): Promise<{ status: number; body: string }> => {
  const response = await fetch(new URL(path, base), { headers: { 'user-agent': agent } });
  return { status: response.status, body: await response.text() };
};

describe(
  'the embedded server and a gateway, started with the same flags, honour them alike (issue 32)',
  { skip },
  () => {
    const both = (): [string, string, () => string][] => [
      ['the embedded server', (server as ServerProcess).base, (server as ServerProcess).output],
      ['the gateway', (gateway as RoleProcess).ready, (gateway as RoleProcess).output],
    ];

    test('--strict-user-agent: a non-browser agent is refused with 3005, a browser one served', async () => {
      for (const [who, base] of both()) {
        const refused = await get(base, '/data/v1/ticker?market=btc_usdt', 'python-requests/2.31');
        assert.equal(refused.status, 200, who);
        const body = JSON.parse(refused.body) as { code: number; message: string };
        assert.equal(body.code, 3005, `${who}: ${refused.body}`);
        assert.match(body.message, /python-requests\/2\.31.*refused/, who);
        const served = await get(base, '/data/v1/ticker?market=btc_usdt', BROWSER);
        assert.equal(served.status, 200, who);
        assert.ok('ticker' in (JSON.parse(served.body) as object), `${who}: ${served.body}`);
      }
    });

    test('--slow-request-ms: a request answered after the bound is logged at warn', async () => {
      for (const [who, base, output] of both()) {
        const answered = await slowPost(base, '/api/getAccountInfo', SLOW_MS * 3);
        assert.equal(answered.status, 200, who);
        const line = await until(`${who}'s slow-request line`, () =>
          output()
            .split('\n')
            .find((l) => l.includes('slow request: POST /api/getAccountInfo')),
        );
        const entry = JSON.parse(line) as { level: unknown; component: string };
        assert.equal(entry.component, 'http', who);
      }
    });

    test('the probes and the trading page’s home answer alike on both', async () => {
      const answers = [];
      for (const [who, base] of both()) {
        const health = await get(base, '/health', 'curl/8');
        assert.equal(health.status, 200, `${who}: ${health.body}`);
        assert.equal((JSON.parse(health.body) as { status: string }).status, 'alive', who);
        const ready = await get(base, '/ready', 'curl/8');
        assert.equal(ready.status, 200, `${who}: ${ready.body}`);
        const home = await get(base, '/', BROWSER);
        answers.push(home.status);
      }
      // 200 with the page when it is built, 503 saying how to build it otherwise: the same on both.
      assert.equal(answers[0], answers[1]);
      assert.ok(answers[0] === 200 || answers[0] === 503, String(answers[0]));
    });
  },
);
