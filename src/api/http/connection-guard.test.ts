import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { WsHarness } from '../../../test/fixtures/ws-harness.ts';
import { TrustedProxies } from './client-ip.ts';
import { connectionGroup, DEFAULT_CONNECTION_LIMITS } from './connection-guard.ts';
import { TestVenue, BROWSER_UA } from '../../../test/fixtures/public-venue.ts';
import { startHttpServer, type HttpServerOptions, type RunningHttpServer } from './server.ts';
import { untilTrue } from '../../../test/fixtures/until.ts';

/** Opens a TCP connection from `localAddress` (any 127.0.0.x is this host's loopback on Linux). */
function open(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Resolves once the server has closed `socket` (or at once if it already has). */
function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve();
    socket.on('close', () => resolve());
    socket.resume();
  });
}

/** A GET from `localAddress` on a fresh connection: the status and JSON body, or the error. */
function get(port: number, path: string, localAddress: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, localAddress, agent: false, headers: { 'user-agent': BROWSER_UA } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function publicServer(
  options: Partial<HttpServerOptions> = {},
): Promise<{ venue: TestVenue; server: RunningHttpServer }> {
  const venue = new TestVenue();
  const server = await startHttpServer({ host: '127.0.0.1', port: 0, handler: venue.handler, ...options });
  return { venue, server };
}

describe('connection limits on the public listener', () => {
  test('thousands of idle connections while a fresh public request from another address still answers', async () => {
    const { venue, server } = await publicServer();
    const perIp = DEFAULT_CONNECTION_LIMITS.maxConnectionsPerIp;
    const attackers = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'];
    const sockets: Socket[] = [];
    try {
      // Each attacking address opens more idle connections than it may hold, in rounds so that
      // the listen backlog does not overflow.
      const attempts = perIp + 100;
      for (let round = 0; round < attempts; round += 50) {
        const batch = attackers.flatMap((address) =>
          Array.from({ length: Math.min(50, attempts - round) }, () => open(server.port, address)),
        );
        sockets.push(...(await Promise.all(batch)));
      }
      assert.equal(sockets.length, attackers.length * attempts, 'thousands of connections were made');
      await untilTrue(
        'every connection beyond the per-address limit was refused',
        () => server.guard.refusedPerIp === attackers.length * (attempts - perIp),
        5_000,
      );
      for (const address of attackers) assert.equal(server.guard.count(address), perIp, address);

      // A fresh request from another address is served at once.
      const fresh = await get(server.port, '/data/v1/markets', '127.0.0.9');
      assert.equal(fresh.status, 200);
      assert.ok('btc_usdt' in (fresh.body as object));
      // One from an attacking address is refused (its connection is closed unanswered).
      await assert.rejects(get(server.port, '/data/v1/markets', '127.0.0.2'));
      // Closing idle connections frees their address's places.
      for (const s of sockets.splice(0, 10)) s.destroy();
      await untilTrue('places freed', () => server.guard.count('127.0.0.2') < perIp, 5_000);
      assert.equal((await get(server.port, '/data/v1/markets', '127.0.0.2')).status, 200);
    } finally {
      for (const s of sockets) s.destroy();
      await server.close();
      await venue.close();
    }
  });

  test('the total bounds every address together; a trusted proxy is bounded only by it', async () => {
    const { venue, server } = await publicServer({
      limits: { maxConnections: 6, maxConnectionsPerIp: 2 },
      trustedProxies: new TrustedProxies(['127.0.0.8']),
    });
    const sockets: Socket[] = [];
    try {
      // The proxy holds five connections (its clients are many); another address two.
      for (let i = 0; i < 5; i++) sockets.push(await open(server.port, '127.0.0.8'));
      sockets.push(await open(server.port, '127.0.0.2'));
      await untilTrue('counted', () => server.guard.count('127.0.0.2') === 1, 5_000);
      // The seventh connection overall is dropped by the total.
      const seventh = await open(server.port, '127.0.0.3');
      await closed(seventh);
      await untilTrue('dropped by the total', () => server.guard.droppedTotal === 1, 5_000);
      assert.equal(server.guard.refusedPerIp, 0);
    } finally {
      for (const s of sockets) s.destroy();
      await server.close();
      await venue.close();
    }
  });

  test('WebSocket connections count too: past the limit an upgrade is refused; another address is not', async () => {
    const ws = new WsHarness();
    const server = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      handler: (_req, res) => res.writeHead(404).end(),
      limits: { maxConnectionsPerIp: 3 },
    });
    ws.gateway.attach(server.server);
    const url = `ws://127.0.0.1:${server.port}/websocket`;
    const dial = (localAddress: string): Promise<WebSocket> =>
      new Promise((resolve, reject) => {
        const client = new WebSocket(url, { localAddress });
        client.once('open', () => resolve(client));
        client.once('error', reject);
      });
    const clients: WebSocket[] = [];
    try {
      for (let i = 0; i < 3; i++) clients.push(await dial('127.0.0.2'));
      await untilTrue('three subscribers connected', () => ws.gateway.connections === 3, 5_000);
      await assert.rejects(dial('127.0.0.2'));
      await assert.rejects(get(server.port, '/', '127.0.0.2'), 'plain HTTP from that address too');
      clients.push(await dial('127.0.0.3'));
      clients.shift()?.terminate();
      await untilTrue(
        'a closed WebSocket frees its place',
        () => server.guard.count('127.0.0.2') === 2,
        5_000,
      );
      clients.push(await dial('127.0.0.2'));
    } finally {
      for (const c of clients) c.terminate();
      await server.close();
      await ws.close();
    }
  });

  test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const { venue, server } = await publicServer({ limits: { keepAliveTimeoutMs: 150 } });
    try {
      const socket = await open(server.port, '127.0.0.2');
      socket.write(`GET /data/v1/markets HTTP/1.1\r\nHost: x\r\nUser-Agent: ${BROWSER_UA}\r\n\r\n`);
      const started = performance.now();
      await closed(socket);
      assert.ok(performance.now() - started < 5_000, 'closed long before the 10 s default would have');
    } finally {
      await server.close();
      await venue.close();
    }
  });

  test('IPv6 addresses count by their /64; IPv4 by the address', () => {
    assert.equal(connectionGroup('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(connectionGroup('2001:db8:1:2::ffff'), '2001:db8:1:2::/64');
    assert.equal(connectionGroup('2001:0db8:0001:0002:0:0:0:1'), '2001:db8:1:2::/64');
    assert.equal(connectionGroup('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(connectionGroup('::1'), '0:0:0:0::/64');
    assert.equal(connectionGroup('::ffff:10.1.2.3'), '10.1.2.3');
    assert.equal(connectionGroup('10.1.2.3'), '10.1.2.3');
  });
});
