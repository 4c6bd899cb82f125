import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { WsTestClient } from '../../../test/fixtures/ws-client.ts';
import { nextTick, WsHarness } from '../../../test/fixtures/ws-harness.ts';

// A Unix socket: its kernel buffers are ~200 KB, where loopback TCP's grow to megabytes, so a
// client that stops reading backs the server up within a few hundred ticks.
const path = join(tmpdir(), `bourse-ws-slow-${process.pid}.sock`);
const h = new WsHarness({ maxBufferedBytes: 64 * 1024 });

after(async () => {
  await h.close();
  rmSync(path, { force: true });
});

/** A client frame: text, masked as RFC 6455 requires of clients. */
function maskedText(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = Buffer.from([1, 2, 3, 4]);
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255]);
  const body = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
  return Buffer.concat([header, mask, body]);
}

/** Connects, upgrades, subscribes to `channels`, then stops reading. */
async function stalledClient(channels: readonly string[]): Promise<Socket> {
  const socket = netConnect(path);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    'GET /websocket HTTP/1.1\r\nHost: bourse\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  for (const channel of channels) socket.write(maskedText(JSON.stringify({ event: 'addChannel', channel })));
  await nextTick();
  socket.pause();
  return socket;
}

test('a client that stops reading is dropped past the bound; the others get every push meanwhile', async () => {
  const base = await h.listen(path);
  const maker = h.user('maker', [
    ['usdt', '10000000'],
    ['btc', '1000'],
  ]);
  const taker = h.user('taker', [
    ['usdt', '10000000'],
    ['btc', '1000'],
  ]);
  for (let i = 0; i < 50; i++) {
    h.order(maker, 1, `${29_000 - i}.00`, '1.0000');
    h.order(maker, 0, `${31_000 + i}.00`, '1.0000');
  }
  const channels = [
    'ticker',
    'depth',
    'quick_depth',
    'trades',
    'kline_1min',
    'kline_5min',
    'kline_1hour',
  ].map((kind) => `btcusdt_${kind}`);
  const stalled = await stalledClient(channels);
  const healthy = await WsTestClient.connect(`${base}/websocket`);
  healthy.subscribe('btcusdt_trades');
  await healthy.onChannel('btcusdt_trades');
  assert.equal(h.gateway.connections, 2);

  let trades = 0;
  let received = 0;
  for (let i = 0; i < 2_000 && h.gateway.dropped === 0; i++) {
    h.time += 1_000;
    h.order(maker, 0, '30000.00', '0.0100');
    h.order(taker, 1, '30000.00', '0.0100');
    trades++;
    received += (await healthy.onChannel('btcusdt_trades')).data.length;
  }
  assert.equal(h.gateway.dropped, 1, 'the stalled client was dropped');
  assert.equal(received, trades, 'the reading client got every trade, one tick at a time');
  await nextTick();
  assert.equal(h.gateway.connections, 1);
  assert.match(h.logs.messages().join('\n'), /dropped a slow consumer/);
  stalled.destroy();
  await healthy.close();
});
