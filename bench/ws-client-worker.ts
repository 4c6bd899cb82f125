/**
 * @module ws-client-worker — a load-generating WebSocket client process for bench:ws: opens
 * `connections` sockets, upgrades them, subscribes each to `channels`, and counts every text
 * frame received. It parses frames itself (RFC 6455: lengths, control frames, chunk boundaries)
 * instead of using `ws`, so that a thousand connections' traffic costs the client side little
 * CPU on a machine it shares with the server. On every `sampleEvery`-th connection it reads the
 * `tid`s of the trades pushes (after the snapshot) and records each sampled trade's arrival
 * time, for the trade-to-push latency.
 *
 * argv: host port path connections sampleEvery channelsJson. IPC: sends `{type:'count', frames,
 * ready, cpuMicros}` every 250 ms; answers `{type:'samples'}` with the recorded `[tid, arrivedMs]` pairs (`clear: true`: and forgets them).
 */
import { connect, type Socket } from 'node:net';

const [
  host = '127.0.0.1',
  portText = '0',
  path = '/websocket',
  countText = '1',
  sampleText = '0',
  channelsJson = '[]',
] = process.argv.slice(2);
const channels = JSON.parse(channelsJson) as string[];
const sampleEvery = Number(sampleText);
/** Only every 10th trade id is sampled: enough for percentiles, little memory. */
const TID_SAMPLE = 10;

let frames = 0;
let ready = 0;
const samples: number[] = [];
const now = (): number => performance.timeOrigin + performance.now();

function masked(opcode: number, payload: Buffer): Buffer {
  const mask = [0x12, 0x34, 0x56, 0x78];
  const header =
    payload.length < 126
      ? Buffer.from([0x80 | opcode, 0x80 | payload.length])
      : Buffer.from([0x80 | opcode, 0x80 | 126, payload.length >> 8, payload.length & 255]);
  const body = Buffer.allocUnsafe(payload.length);
  for (let i = 0; i < payload.length; i++) body[i] = (payload[i] as number) ^ (mask[i & 3] as number);
  return Buffer.concat([header, Buffer.from(mask), body]);
}

const TRADES_PREFIX = Buffer.from('{"data":[');

function open(index: number): void {
  const socket: Socket = connect(Number(portText), host);
  socket.setNoDelay(true);
  const sampled = sampleEvery > 0 && index % sampleEvery === 0;
  let upgraded = false;
  let pending: Buffer = Buffer.alloc(0);
  let snapshots = 0;
  let tradesSnapshotSeen = false;
  socket.on('connect', () => {
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${Buffer.from(String(index).padStart(16, '0')).toString('base64')}\r\n` +
        'Sec-WebSocket-Version: 13\r\n\r\n',
    );
  });
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let at = 0;
    if (!upgraded) {
      const end = pending.indexOf('\r\n\r\n');
      if (end === -1) return;
      if (!pending.subarray(0, 12).toString('latin1').includes('101')) throw new Error('upgrade refused');
      upgraded = true;
      at = end + 4;
      for (const channel of channels) {
        socket.write(masked(1, Buffer.from(JSON.stringify({ event: 'addChannel', channel }))));
      }
    }
    while (pending.length - at >= 2) {
      const b0 = pending[at] as number;
      let length = (pending[at + 1] as number) & 0x7f;
      let header = 2;
      if (length === 126) {
        if (pending.length - at < 4) break;
        length = pending.readUInt16BE(at + 2);
        header = 4;
      } else if (length === 127) {
        if (pending.length - at < 10) break;
        length = Number(pending.readBigUInt64BE(at + 2));
        header = 10;
      }
      if (pending.length - at < header + length) break;
      const opcode = b0 & 0x0f;
      const start = at + header;
      at = start + length;
      if (opcode === 1) {
        frames++;
        if (snapshots < channels.length && ++snapshots === channels.length) ready++;
        const isTrades =
          pending.compare(TRADES_PREFIX, 0, TRADES_PREFIX.length, start, start + TRADES_PREFIX.length) === 0;
        // The first trades message is the snapshot: its trades are older than the subscription.
        if (isTrades && !tradesSnapshotSeen) tradesSnapshotSeen = true;
        else if (isTrades && sampled) record(pending.toString('latin1', start, at));
      } else if (opcode === 9) {
        socket.write(masked(10, pending.subarray(start, at)));
      } else if (opcode === 8) {
        socket.end();
      }
    }
    pending = at >= pending.length ? Buffer.alloc(0) : pending.subarray(at);
  });
  socket.on('error', () => undefined);
}

function record(text: string): void {
  const arrived = now();
  for (const m of text.matchAll(/"tid":(\d+)/g)) {
    const tid = Number(m[1]);
    if (tid % TID_SAMPLE === 0) samples.push(tid, arrived);
  }
}

const count = Number(countText);
let opened = 0;
// Open in small steps: a thousand simultaneous handshakes would only measure the accept queue.
const opener = setInterval(() => {
  for (let i = 0; i < 50 && opened < count; i++) open(opened++);
  if (opened >= count) clearInterval(opener);
}, 20);

setInterval(() => {
  const cpu = process.cpuUsage();
  process.send?.({ type: 'count', frames, ready, cpuMicros: cpu.user + cpu.system });
}, 250);
process.on('message', (message: { type: string; clear?: boolean }) => {
  if (message.type === 'samples') {
    process.send?.({ type: 'samples', samples });
    // `clear`: the next answer has only what arrived after this one (bench:venue's rate steps).
    if (message.clear === true) samples.length = 0;
  }
  if (message.type === 'stop') process.exit(0);
});
