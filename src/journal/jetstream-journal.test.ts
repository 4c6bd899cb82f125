/**
 * @module jetstream-journal.test — the journal contract on a JetStream stream of a private
 * nats-server (`sync_interval: always`), and what only this adapter does: the server's sync
 * check, the stream's configuration check, fencing of a deposed writer, a server restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { natsSkipReason, startNatsServer, type NatsServer } from '../../test/fixtures/nats-server.ts';
import { JournalFailedError } from './file-journal.ts';
import {
  JetStreamJournal,
  JournalUnsafeServerError,
  type JetStreamJournalOptions,
} from './jetstream-journal.ts';
import { durable, payloadOf, readAll, runJournalContract } from './journal.case.ts';

const skip = natsSkipReason();
let server: NatsServer | undefined;
let streams = 0;

before(async () => {
  if (skip === false) server = await startNatsServer();
});
after(() => server?.stop());

const optionsFor = (
  stream: string,
  extra: Partial<JetStreamJournalOptions> = {},
): JetStreamJournalOptions => {
  const s = server as NatsServer;
  return { servers: s.url, monitorUrls: s.monitorUrl, stream, subject: `journal.${stream}`, ...extra };
};
const nextStream = (): string => `J${process.pid}_${++streams}`;

runJournalContract(
  'jetstream',
  async () => {
    const stream = nextStream();
    return { open: () => JetStreamJournal.open(optionsFor(stream)) };
  },
  { skip },
);

describe('JetStreamJournal', { skip }, () => {
  it('refuses a server that does not fsync every write, naming the setting', async () => {
    const weak = await startNatsServer({ syncAlways: false });
    try {
      await assert.rejects(
        JetStreamJournal.open({ servers: weak.url, monitorUrls: weak.monitorUrl, stream: nextStream() }),
        (error: unknown) => {
          assert.ok(error instanceof JournalUnsafeServerError);
          assert.match(error.message, /does not fsync each JetStream write \(sync interval 120 s\)/);
          assert.match(error.message, /sync_interval: always/);
          return true;
        },
      );
      // Nothing was created on the weak server.
      const nc = await connect({ servers: weak.url });
      const jsm = await jetstreamManager(nc);
      assert.deepEqual(await jsm.streams.names().next(), []);
      await nc.close();
    } finally {
      await weak.stop();
    }
  });

  it('refuses to start when it cannot read the server’s settings', async () => {
    const s = server as NatsServer;
    await assert.rejects(
      JetStreamJournal.open({ servers: s.url, monitorUrls: 'http://127.0.0.1:1', stream: nextStream() }),
      /cannot read http:\/\/127\.0\.0\.1:1\/varz/,
    );
    await assert.rejects(
      JetStreamJournal.open({ servers: s.url, monitorUrls: [], stream: nextStream() }),
      JournalUnsafeServerError,
    );
  });

  it('refuses an existing stream that cannot hold a journal', async () => {
    const s = server as NatsServer;
    const nc = await connect({ servers: s.url });
    const jsm = await jetstreamManager(nc);
    const stream = nextStream();
    await jsm.streams.add({ name: stream, subjects: [`journal.${stream}.*`], max_age: 60e9 });
    await assert.rejects(JetStreamJournal.open(optionsFor(stream)), /cannot hold the journal: .*limits/);
    await assert.rejects(
      JetStreamJournal.open(optionsFor(stream, { subject: 'other' })),
      /its subjects are \[journal\.J\d+_\d+\.\*\], not \[other\.\*\]/,
    );
    await nc.close();
  });

  it('a deposed writer is refused and never forks the journal', async () => {
    const stream = nextStream();
    // Messages of at most 12 bytes: one or two records each, so that several are in flight at once.
    const old = await JetStreamJournal.open(optionsFor(stream, { maxBatchBytes: 12 }));
    for (let seq = 1; seq <= 5; seq++) old.append(seq, Buffer.from(`r${seq}`));
    await old.whenDurable(5);
    // A new leader opens the same stream and appends one message.
    const leader = await JetStreamJournal.open(optionsFor(stream));
    assert.equal(leader.durableSeq, 5);
    leader.append(6, Buffer.from('leader 6'));
    await leader.whenDurable(6);
    // The old writer wakes up and appends what it believes comes next: two messages in flight
    // together. The second one expects the stream sequence that the leader's message now has, so
    // the expected sequence alone would let it in; its writer's own subject sequence does not.
    const errors: Error[] = [];
    old.onError((error) => errors.push(error));
    const reported: number[] = [];
    old.onDurable((d) => reported.push(d));
    old.append(6, Buffer.from('old 6'));
    old.append(7, Buffer.from('old 7'));
    await assert.rejects(old.whenDurable(7), JournalFailedError);
    assert.equal(errors.length, 1);
    assert.match((errors[0] as Error).message, /refused records 6-6: wrong last sequence: 4 .*deposed/);
    assert.deepEqual(reported, []);
    assert.equal(old.durableSeq, 5);
    assert.throws(() => old.append(8, Buffer.from('old 8')), JournalFailedError);
    await assert.rejects(old.close(), JournalFailedError);
    // The stream holds the leader's records and nothing of the old writer's.
    leader.append(7, Buffer.from('leader 7'));
    await leader.whenDurable(7);
    const records = await readAll(leader, 5);
    assert.deepEqual(
      records.map((r) => [r.seq, Buffer.from(r.payload).toString()]),
      [
        [5, 'r5'],
        [6, 'leader 6'],
        [7, 'leader 7'],
      ],
    );
    await leader.close();
  });

  it('a fence at open refuses every earlier writer at once; readers skip it; tags come back with their records', async () => {
    const stream = nextStream();
    const old = await JetStreamJournal.open(optionsFor(stream));
    old.append(1, Buffer.from('r1'), 'req-1');
    old.append(2, Buffer.from('r2'));
    await old.whenDurable(2);
    assert.throws(() => old.append(3, Buffer.from('r3'), 'not a tag'), RangeError);
    // The new writer fences as it opens, before it appends anything.
    const leader = await JetStreamJournal.open(optionsFor(stream, { fence: true }));
    assert.equal(leader.durableSeq, 2);
    const errors: Error[] = [];
    old.onError((error) => errors.push(error));
    old.append(3, Buffer.from('old 3'), 'req-old');
    await assert.rejects(old.whenDurable(3), JournalFailedError);
    assert.match((errors[0] as Error).message, /refused records 3-3: wrong last sequence.*deposed/);
    await assert.rejects(old.close(), JournalFailedError);
    leader.append(3, Buffer.from('leader 3'), 'req-3');
    await leader.whenDurable(3);
    const records = [];
    for await (const r of leader.read(1)) records.push([r.seq, Buffer.from(r.payload).toString(), r.tag]);
    assert.deepEqual(records, [
      [1, 'r1', 'req-1'],
      [2, 'r2', undefined],
      [3, 'leader 3', 'req-3'],
    ]);
    await leader.close();
    // A journal reopened on a stream that ends with a fence continues after its last record.
    const third = await JetStreamJournal.open(optionsFor(stream, { fence: true }));
    assert.equal(third.durableSeq, 3);
    assert.deepEqual(
      (await readAll(third, 3)).map((r) => r.seq),
      [3],
    );
    await third.close();
  });

  it('a server killed and restarted mid-stream: every record stored once, in order, and the journal goes on', async () => {
    const s = server as NatsServer;
    const stream = nextStream();
    const journal = await JetStreamJournal.open(optionsFor(stream));
    const logs: string[] = [];
    let seq = 0;
    for (; seq < 500; seq++) journal.append(seq + 1, payloadOf(seq + 1));
    await journal.whenDurable(seq);
    // Records in flight while the server dies, and more while it is away.
    for (let i = 0; i < 200; i++, seq++) journal.append(seq + 1, payloadOf(seq + 1));
    await s.restart();
    for (let i = 0; i < 200; i++, seq++) journal.append(seq + 1, payloadOf(seq + 1));
    await journal.whenDurable(seq);
    assert.equal(journal.failure, null);
    await journal.close();
    const reopened = await JetStreamJournal.open(optionsFor(stream, { log: (m) => logs.push(m) }));
    assert.equal(reopened.durableSeq, seq);
    const records = await readAll(reopened);
    assert.equal(records.length, seq);
    for (const [i, r] of records.entries()) {
      assert.equal(r.seq, i + 1);
      assert.deepEqual(r.payload, payloadOf(i + 1));
    }
    await reopened.close();
  });

  it('retention purges the messages below the cut, never the last; a read from before it is refused', async () => {
    const journal = await JetStreamJournal.open(optionsFor(nextStream()));
    for (let seq = 1; seq <= 100; seq++) {
      journal.append(seq, payloadOf(seq));
      if (seq % 10 === 0) await durable(journal, seq);
    }
    assert.deepEqual(journal.removeSegmentsBefore(45), [
      `stream ${journal.stream} messages before the one holding seq 45`,
    ]);
    await journal.close();
    const reopened = await JetStreamJournal.open(optionsFor(journal.stream));
    // Ten records a message: the message holding 45 starts at 41.
    assert.equal(reopened.firstSeq, 41);
    assert.equal(reopened.durableSeq, 100);
    await assert.rejects(readAll(reopened, 40), /oldest record in stream .* is 41/);
    assert.equal((await readAll(reopened, 45)).length, 56);
    // Everything but the last message may go; the journal still knows where it is.
    reopened.removeSegmentsBefore(1_000);
    await reopened.close();
    const last = await JetStreamJournal.open(optionsFor(journal.stream));
    assert.equal(last.firstSeq, 91);
    assert.equal(last.durableSeq, 100);
    await last.close();
  });

  it('refuses a payload over the server’s max_payload and changes nothing', async () => {
    const journal = await JetStreamJournal.open(optionsFor(nextStream()));
    assert.throws(() => journal.append(1, Buffer.alloc(2 * 1024 * 1024)), /exceeds a message's/);
    assert.equal(journal.pending, 0);
    journal.append(1, Buffer.from('fits'));
    await journal.close();
  });
});
