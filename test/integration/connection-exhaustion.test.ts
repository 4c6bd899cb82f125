/**
 * Connection exhaustion against the real venue (issue 13): thousands of idle connections on the
 * public listener, from several addresses (any 127.0.0.x is this host's loopback on Linux), while
 * the admin API on its own listener and a fresh public request from another address still answer.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { writeMasterKeyFile } from '../../src/config/master-key.ts';
import { readListenFile } from '../../src/config/listen-file.ts';
import { DEFAULT_OPTIONS } from '../../src/config/options.ts';
import { startVenue } from '../../src/main.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { testVenueOptions } from '../fixtures/venue-options.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-exhaust-'));
after(() => rmSync(root, { recursive: true, force: true }));

function open(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.on('error', reject);
  });
}

/** One request on a fresh connection from `localAddress`: its status and JSON body. */
function call(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  localAddress: string,
  token?: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port: Number(port),
        method,
        path,
        localAddress,
        agent: false,
        headers: {
          'user-agent': 'Mozilla/5.0 test',
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

test('thousands of idle connections: the admin API and a fresh public request from another address still answer', async () => {
  const masterKeyFile = join(root, 'master.key');
  if (!existsSync(masterKeyFile)) writeMasterKeyFile(masterKeyFile);
  // The default limits: 256 connections per address, 10,000 in total.
  const venue = await startVenue(
    testVenueOptions({ dataDir: join(root, 'data'), masterKeyFile }),
    SILENT_LOG,
  );
  const sockets: Socket[] = [];
  try {
    const listen = readListenFile(venue.options.dataDir);
    assert.ok(listen !== undefined && 'url' in listen.admin);
    const token = readFileSync(join(venue.options.dataDir, 'admin.token'), 'utf8').trim();
    // Eight addresses each open more idle connections than they may hold (in rounds, so that the
    // listen backlog does not overflow): thousands of connections made, 256 per address held.
    const attackers = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);
    const attempts = 300;
    for (let round = 0; round < attempts; round += 50) {
      const batch = attackers.flatMap((address) =>
        Array.from({ length: 50 }, () => open(venue.http.port, address)),
      );
      sockets.push(...(await Promise.all(batch)));
    }
    assert.equal(sockets.length, 2_400);
    const guard = venue.http.guard;
    const refused = attackers.length * (attempts - DEFAULT_OPTIONS.maxConnectionsPerIp);
    for (let i = 0; i < 500 && guard.refusedPerIp < refused; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(guard.refusedPerIp, refused, 'each address held its 256 and no more');
    for (const address of attackers) assert.equal(guard.count(address), DEFAULT_OPTIONS.maxConnectionsPerIp);

    // A fresh public request from another address is answered.
    const fresh = await call(listen.public.url, 'GET', '/data/v1/markets', '127.0.0.20');
    assert.equal(fresh.status, 200);
    assert.ok('btc_usdt' in fresh.body);
    // One from an attacking address is not (its connection is closed unanswered).
    await assert.rejects(call(listen.public.url, 'GET', '/data/v1/markets', '127.0.0.2'));

    // The admin API, on its own listener, answers whatever the public one holds.
    const state = await call(listen.admin.url, 'POST', '/admin/state', '127.0.0.1', token);
    assert.equal(state.status, 200);
    assert.equal(state.body.code, 1000);
  } finally {
    for (const s of sockets) s.destroy();
    await venue.close();
  }
});
