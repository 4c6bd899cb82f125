/**
 * The real server with its journal on JetStream (`--journal-url`), on a private nats-server 2.10+
 * with `sync_interval: always`: it acknowledges orders under load, is killed with SIGKILL,
 * restarts from the stream, and has every order it acknowledged (in the stream, and served by the
 * restarted server). A server without `sync_always` is refused at start, and so is a data
 * directory whose journal is another one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseJournalUrl } from '../../src/config/journal-url.ts';
import { JetStreamJournal } from '../../src/journal/jetstream-journal.ts';
import { decodeCommand } from '../../src/sequencer/command-codec.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';
import { startServer } from '../fixtures/server-process.ts';
import { createTrader, ZbClient } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const skip = natsSkipReason();
const root = mkdtempSync(join(tmpdir(), 'bourse-js-venue-'));
let nats: NatsServer | undefined;
before(async () => {
  if (skip === false) nats = await startNatsServer();
});
after(async () => {
  await nats?.stop();
  rmSync(root, { recursive: true, force: true });
});

const journalUrl = (server: NatsServer, stream: string): string =>
  `${server.url}?stream=${stream}&monitor=${server.monitorUrl}`;

/** Places orders through `client` until `stop.now`; records the ones acknowledged (code 1000). */
async function placeOrders(
  client: ZbClient,
  tag: string,
  acked: Map<string, string>,
  stop: { now: boolean },
): Promise<void> {
  for (let n = 0; !stop.now; n++) {
    const cid = `${tag}x${n}`;
    const buy = n % 2 === 0;
    try {
      const r = await client.call('order', [
        ['currency', 'btc_usdt'],
        ['tradeType', buy ? '1' : '0'],
        ['price', (30000 + (n % 17) * (buy ? -1 : 1)).toFixed(2)],
        ['amount', '0.0010'],
        ['customerOrderId', cid],
      ]);
      if (r.code === 1000) acked.set(cid, String(r.id));
    } catch {
      return; // killed mid-request: never acknowledged
    }
  }
}

describe('the server on the JetStream journal', { skip }, () => {
  test('acknowledged orders survive kill -9: the restarted server recovers them from the stream', async () => {
    const s = nats as NatsServer;
    const stream = `VENUE_${process.pid}`;
    const dataDir = join(root, 'kill');
    const flags = ['--journal-url', journalUrl(s, stream), '--rate-limits=false', '--snapshot-every', '300'];
    let server = await startServer(dataDir, flags);
    assert.match(server.output(), new RegExp(`journal: JetStream stream ${stream} on nats://`));
    const alice = await createTrader(server, 'alice', [['usdt', '100000000']]);
    const bob = await createTrader(server, 'bob', [['btc', '10000']]);

    const acked = new Map<string, string>();
    const stop = { now: false };
    const loads = [
      placeOrders(alice, 'a1', acked, stop),
      placeOrders(alice, 'a2', acked, stop),
      placeOrders(bob, 'b1', acked, stop),
      placeOrders(bob, 'b2', acked, stop),
    ];
    while (acked.size < 400) await new Promise((resolve) => setTimeout(resolve, 20));
    await server.kill(); // mid-load
    stop.now = true;
    await Promise.all(loads);
    assert.deepEqual(JSON.parse(readFileSync(join(dataDir, 'journal.json'), 'utf8')), {
      kind: 'jetstream',
      stream,
      servers: [s.url],
      url: journalUrl(s, stream),
    });

    // Every acknowledged order is in the stream (read with a journal of the test's own).
    const location = parseJournalUrl(journalUrl(s, stream));
    const journal = await JetStreamJournal.open({ ...location });
    const inStream = new Set<string>();
    try {
      for await (const { seq, payload } of journal.read(1)) {
        const command = decodeCommand(seq, payload);
        if (command.type === 'PlaceOrder') inStream.add(command.clientOrderId);
      }
    } finally {
      await journal.close();
    }
    for (const cid of acked.keys())
      assert.ok(inStream.has(cid), `acknowledged order ${cid} is not in the stream`);

    // The server restarts from the stream and serves each of them; then goes on.
    server = await startServer(dataDir, flags);
    try {
      assert.match(server.output(), /recovered at seq \d+/);
      const sample = [...acked].filter((_, i) => i % 20 === 0 || i === acked.size - 1);
      // The restarted server listens on another free port.
      const again = (c: ZbClient): ZbClient => new ZbClient(server.base, c.accessKey, c.secret);
      const [alice2, bob2] = [again(alice), again(bob)];
      for (const [cid, id] of sample) {
        const client = cid.startsWith('a') ? alice2 : bob2;
        const r = await client.call('getOrder', [
          ['currency', 'btc_usdt'],
          ['id', id],
        ]);
        assert.equal(r.id, id, `order ${cid} after the restart: ${JSON.stringify(r)}`);
      }
      const more = await alice2.call('order', [
        ['currency', 'btc_usdt'],
        ['tradeType', '1'],
        ['price', '29000.00'],
        ['amount', '0.0010'],
      ]);
      assert.equal(more.code, 1000, JSON.stringify(more));
    } finally {
      await server.stop();
    }
  });

  test('a NATS server without sync_interval: always is refused at start, naming the setting', async () => {
    const lax = await startNatsServer({ syncAlways: false });
    try {
      await assert.rejects(
        startServer(join(root, 'lax'), ['--journal-url', journalUrl(lax, 'LAX')]),
        /bourse: cannot start: the journal on JetStream stream LAX on nats:\/\/\S+: the NATS server at \S+ \(\S+\) does not fsync each JetStream write .* Start it with `jetstream \{ sync_interval: always \}`\.\n/,
      );
    } finally {
      await lax.stop();
    }
  });

  test('a data directory whose journal is files is refused with --journal-url, and told how to move it', async () => {
    const dataDir = join(root, 'files');
    const server = await startServer(dataDir, []);
    await createTrader(server, 'carol', [['usdt', '100']]);
    await server.stop();
    await assert.rejects(
      startServer(dataDir, ['--journal-url', journalUrl(nats as NatsServer, 'OTHER')]),
      /bourse: cannot start: the data directory .* belongs to the file journal in .* start without --journal-url, or move the journal first with `bourse journal copy --to …` \(docs\/scale-out.md\)\n/,
    );
  });
});
