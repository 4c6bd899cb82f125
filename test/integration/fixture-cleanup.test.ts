/**
 * A fixture whose start fails leaves no process behind (issue 31: a cluster fixture that threw
 * at a load average of 10 leaked its children and hung the suite): the server that never
 * listens is killed at the fixture's time limit, a role that is not ready likewise, and a cluster
 * whose engine cannot start stops the NATS server and everything else it had started.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startCluster } from '../fixtures/cluster.ts';
import { natsSkipReason } from '../fixtures/nats-server.ts';
import { pgSkipReason } from '../fixtures/postgres.ts';
import { redisSkipReason } from '../fixtures/redis-server.ts';
import { roleStart, startRole } from '../fixtures/role-process.ts';
import { serverStart, startServer } from '../fixtures/server-process.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { until } from '../fixtures/until.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-fixture-cleanup-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** This process's running children (a zombie, dead but not yet reaped, does not count). */
function children(): number[] {
  const pids = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
    .split(' ')
    .filter((p) => p !== '')
    .map(Number);
  return pids.filter((pid) => {
    try {
      return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  });
}

const none = (what: string): Promise<true> =>
  until(`no child process left after ${what}`, () => (children().length === 0 ? true : undefined), 30_000);

test('a server that never listens is killed when startServer gives up', async () => {
  const hang = join(root, 'hang.mjs');
  writeFileSync(hang, "setInterval(() => {}, 1000);\nconsole.log('not listening');\n");
  const saved = serverStart.timeoutMs;
  serverStart.timeoutMs = 1_000;
  try {
    await assert.rejects(startServer(join(root, 'data'), [], {}, [], hang), /server did not start in time/);
  } finally {
    serverStart.timeoutMs = saved;
  }
  await none('startServer');
});

test('a role that is never ready is killed when startRole gives up', async () => {
  // A venue's identity and master key for the gateway to read: a server's, stopped.
  const data = join(root, 'venue', 'data');
  await (await startServer(data)).stop();
  const keys = join(root, 'venue', 'config', 'bourse');
  const keyFile = join(keys, readdirSync(keys).find((f) => f.startsWith('master-')) as string);
  // A "NATS server" that accepts and never speaks: the gateway waits for its stream's greeting
  // (a refused port would make it exit at once, which is not what this test is about).
  const sockets: Socket[] = [];
  const silent = createServer((s) => sockets.push(s));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as { port: number }).port;
  const saved = roleStart.timeoutMs;
  roleStart.timeoutMs = 1_000;
  try {
    await assert.rejects(
      startRole('gateway', [
        '--data',
        data,
        '--master-key-file',
        keyFile,
        '--journal-url',
        `nats://127.0.0.1:${port}`,
      ]),
      /gateway did not start in time/,
    );
  } finally {
    roleStart.timeoutMs = saved;
    for (const s of sockets) s.destroy();
    silent.close();
  }
  await none('startRole');
});

const skip = natsSkipReason() || (await pgSkipReason()) || (await redisSkipReason());

test('a cluster whose engine cannot start stops everything it had started', { skip }, async () => {
  await assert.rejects(startCluster({ flags: ['--no-such-flag'] }), /engine exited|unknown option/);
  await none('startCluster');
});
