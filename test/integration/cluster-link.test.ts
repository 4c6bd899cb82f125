/**
 * Issue 18, the pieces of a gateway process: commands forwarded to the engine over NATS
 * request/reply (command-link.ts) and a read replica fed by the journal's stream
 * (stream-replica.ts), on a private nats-server with `sync_interval: always`. The engine side is
 * the real sequencer on the JetStream journal; the gateway side holds no engine of the leader's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  CommandService,
  COMMAND_SUBJECT,
  JournaledAnswers,
  RemoteSubmit,
} from '../../src/cluster/command-link.ts';
import { readRecentIds } from '../../src/cluster/recent-ids.ts';
import { StreamReplica } from '../../src/cluster/stream-replica.ts';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import { BUY, SELL, type Command } from '../../src/domain/commands.ts';
import { Engine } from '../../src/engine/engine.ts';
import { JetStreamJournal } from '../../src/journal/jetstream-journal.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { Sequencer, SequencerStoppedError } from '../../src/sequencer/sequencer.ts';
import { FeedPositionError } from '../../src/sequencer/venue-ports.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const skip = natsSkipReason();
let server: NatsServer | undefined;
const connections: NatsConnection[] = [];
/** Closed at the end even when a test fails, so that nothing reconnects to a stopped server. */
const closing: { close(): Promise<void> }[] = [];
before(async () => {
  if (skip === false) server = await startNatsServer();
});
after(async () => {
  for (const c of closing) await c.close().catch(() => undefined);
  for (const nc of connections) await nc.close();
  await server?.stop();
});

const nats = async (): Promise<NatsConnection> => {
  const nc = await connect({ servers: (server as NatsServer).url });
  connections.push(nc);
  return nc;
};

/** A leader: the sequencer on a fresh stream, answering commands on `subject`. */
async function startLeader(name: string) {
  const stream = `LINK_${process.pid}_${name}`;
  const subject = `journal.${stream}`;
  const journal = await JetStreamJournal.open({
    servers: (server as NatsServer).url,
    monitorUrls: (server as NatsServer).monitorUrl,
    stream,
    subject,
  });
  const { engine } = await recover({
    genesis: DEFAULT_VENUE,
    journal,
    snapshots: undefined,
    log: SILENT_LOG,
  });
  const sequencer = new Sequencer(engine, journal, undefined, {
    clock: Date.now,
    maxInFlight: 100_000,
    snapshotEveryCommands: 0,
    snapshotEveryMs: 0,
    keepSnapshots: 2,
    pruneJournal: false,
    log: SILENT_LOG,
    // As the server runs it (src/main.ts): the engine's events reused after each turn (issue 34).
    reuseEvents: true,
  });
  closing.push(sequencer);
  const commands = `${COMMAND_SUBJECT}.${name}`;
  const service = new CommandService(await nats(), sequencer, { subject: commands, log: SILENT_LOG });
  return { stream, subject, commands, sequencer, engine, service };
}

async function replicaOf(leader: { stream: string; subject: string }, engine = new Engine(DEFAULT_VENUE)) {
  const replica = await StreamReplica.open({
    servers: (server as NatsServer).url,
    stream: leader.stream,
    subject: leader.subject,
    engine,
    log: SILENT_LOG,
  });
  closing.push(replica);
  return replica;
}

/** Two funded traders and `rounds` of crossing orders, through `submit`. */
async function trade(submit: (c: Command) => Promise<{ result: string; userId?: number }>, rounds: number) {
  const a = (await submit({ type: 'RegisterUser', name: 'a' })).userId as number;
  const b = (await submit({ type: 'RegisterUser', name: 'b' })).userId as number;
  const credit = (userId: number, coin: string, amount: number): Command => ({
    type: 'CreditDeposit',
    depositId: `${userId}-${coin}`,
    userId,
    coin,
    amount,
    remark: '',
  });
  await Promise.all([submit(credit(a, 'usdt', 10 ** 13)), submit(credit(b, 'btc', 10 ** 11))]);
  const place = {
    type: 'PlaceOrder',
    market: 'btc_usdt',
    kind: 'limit',
    acctType: 0,
    clientOrderId: '',
  } as const;
  const results = [];
  for (let i = 0; i < rounds; i++) {
    results.push(
      ...(await Promise.all([
        submit({ ...place, userId: b, side: SELL, price: 3_000_000 + (i % 13) * 100, amount: 10 }),
        submit({ ...place, userId: a, side: BUY, price: 3_000_000 + (i % 7) * 100, amount: 7 }),
      ])),
    );
  }
  return { a, b, results };
}

describe('gateway pieces: remote submit and a stream-fed replica (issue 18)', { skip }, () => {
  test('a command sent through the link is answered once applied on the gateway replica, whose state hash is the leader’s', async () => {
    const leader = await startLeader('hash');
    const replica = await replicaOf(leader);
    const seen: number[] = [];
    replica.subscribe(replica.appliedSeq + 1, (batch) => seen.push(...batch.map((c) => c.command.seq)));
    const remote = new RemoteSubmit(await nats(), replica, { subject: leader.commands });
    const { a, results } = await trade(remote.submit, 20);
    assert.ok(results.every((r) => r.result === 'OK'));
    // Answered after the replica applied it: a read right after the reply sees the order.
    const placed = await remote.submit({
      type: 'PlaceOrder',
      userId: a,
      market: 'btc_usdt',
      kind: 'limit',
      acctType: 0,
      clientOrderId: 'mine',
      side: BUY,
      price: 2_000_000,
      amount: 10,
    });
    assert.equal(placed.result, 'OK', placed.message);
    assert.ok(replica.state.openOrder(placed.orderId as number) !== undefined);
    assert.equal(replica.appliedSeq, leader.engine.lastSeq);
    assert.equal(replica.state.stateHash(), leader.engine.stateHash());
    assert.deepEqual(
      seen,
      Array.from({ length: leader.engine.lastSeq }, (_, i) => i + 1),
    );
    replica.state.assertInvariants();

    // A replica started later, from genesis or from a snapshot, reaches the same state.
    const fromGenesis = await replicaOf(leader);
    const fromSnapshot = await replicaOf(leader, Engine.restore(leader.engine.snapshot()));
    assert.throws(() => fromSnapshot.subscribe(1, () => undefined), FeedPositionError);
    await remote.submit({ type: 'RegisterUser', name: 'late' });
    await Promise.all([fromGenesis, fromSnapshot].map((r) => r.whenApplied(leader.engine.lastSeq)));
    assert.equal(fromGenesis.state.stateHash(), leader.engine.stateHash());
    assert.equal(fromSnapshot.state.stateHash(), leader.engine.stateHash());

    // The leader's hash at a seq ahead is checked when the replica gets there; a wrong one stops it.
    const ahead = leader.engine.lastSeq + 1;
    fromGenesis.expectHash(leader.engine.lastSeq, leader.engine.stateHash());
    assert.equal(fromGenesis.hashesChecked, 1);
    const stopped = new Promise<Error>((resolve) => fromSnapshot.onFatal(resolve));
    fromSnapshot.expectHash(ahead, 'not-the-leaders-hash');
    await remote.submit({ type: 'RegisterUser', name: 'checked' });
    assert.match(
      (await stopped).message,
      new RegExp(`replica state at seq ${ahead} differs from the leader's`),
    );
    await assert.rejects(fromSnapshot.whenApplied(ahead + 10), /differs/);
    assert.equal(fromGenesis.failure, undefined);

    for (const r of [replica, fromGenesis, fromSnapshot]) await r.close();
    await leader.service.close();
    await leader.sequencer.close();
  });

  test('with no engine, a command is sent again until one takes it, and applied once; past the deadline it is NOT_ACCEPTED', async () => {
    const leader = await startLeader('failover');
    const replica = await replicaOf(leader);
    const nc = await nats();
    await leader.service.close();
    const remote = new RemoteSubmit(nc, replica, {
      subject: leader.commands,
      timeoutMs: 5_000,
      retryDelayMs: 20,
    });
    const pending = remote.submit({ type: 'RegisterUser', name: 'patient' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // "The standby takes over": an engine subscribes again on the subject.
    const service = new CommandService(await nats(), leader.sequencer, {
      subject: leader.commands,
      log: SILENT_LOG,
    });
    const result = await pending;
    assert.equal(result.result, 'OK');
    assert.equal(leader.engine.lastSeq, 1);
    assert.equal(replica.state.userId('patient'), result.userId);

    await service.close();
    const impatient = new RemoteSubmit(nc, replica, { subject: leader.commands, timeoutMs: 100 });
    await assert.rejects(impatient.submit({ type: 'RegisterUser', name: 'nobody' }), SequencerStoppedError);
    assert.equal(leader.engine.lastSeq, 1);
    await replica.close();
    await leader.sequencer.close();
  });

  test('request ids travel in the journal: an engine taking over answers a request sent again, never applies it twice', async () => {
    const leader = await startLeader('ids');
    const nc = await nats();
    const body = JSON.stringify({ id: 'req-takeover', command: { type: 'RegisterUser', name: 'once' } });
    const first = JSON.parse((await nc.request(leader.commands, body, { timeout: 5_000 })).string());
    assert.equal(first.ok, true);
    // What a standby collects from the stream: the journaled ids with their results.
    const answers = new JournaledAnswers();
    const replica = await replicaOf(leader);
    replica.subscribe(replica.appliedSeq + 1, answers.add);
    await replica.whenApplied(leader.engine.lastSeq);
    assert.deepEqual(
      [...answers.values()].map((a) => [a.id, a.seq]),
      [['req-takeover', 1]],
    );
    // The old engine's service goes; a new one (the engine that took over) knows the id from the stream.
    leader.service.abandon();
    const service = new CommandService(await nats(), leader.sequencer, {
      subject: leader.commands,
      journaled: answers.values(),
      log: SILENT_LOG,
    });
    await service.ready();
    const again = JSON.parse((await nc.request(leader.commands, body, { timeout: 5_000 })).string());
    assert.deepEqual(again, first);
    assert.equal(leader.engine.lastSeq, 1);
    // An engine that starts from a snapshot reads the recent ids from the headers alone: a request
    // sent again is answered "already applied" (NOT_ACCEPTED at the gateway), not applied again.
    const recent = await readRecentIds(nc, {
      stream: leader.stream,
      subject: leader.subject,
      sinceMs: Date.now() - 30_000,
    });
    assert.deepEqual(
      recent.map((r) => [r.id, r.seq]),
      [['req-takeover', 1]],
    );
    const fromHeaders = new JournaledAnswers();
    fromHeaders.addJournaled(recent);
    service.abandon();
    const third = new CommandService(await nats(), leader.sequencer, {
      subject: leader.commands,
      journaled: fromHeaders.values(),
      log: SILENT_LOG,
    });
    await third.ready();
    const known = JSON.parse((await nc.request(leader.commands, body, { timeout: 5_000 })).string());
    assert.equal(known.ok, false);
    assert.equal(known.stopped, false);
    assert.match(known.message, /already applied \(seq 1\).*check its effect/);
    assert.equal(leader.engine.lastSeq, 1);
    // An id that cannot travel in the journal is refused before anything is applied.
    const bad = JSON.stringify({ id: 'has space', command: { type: 'RegisterUser', name: 'x' } });
    const refused = JSON.parse((await nc.request(leader.commands, bad, { timeout: 5_000 })).string());
    assert.equal(refused.ok, false);
    assert.match(refused.message, /id 1 to 64 of/);
    assert.equal(leader.engine.lastSeq, 1);
    await third.close();
    await replica.close();
    await leader.sequencer.close();
  });

  test('a request delivered twice is applied once; a malformed one is refused and changes nothing', async () => {
    const leader = await startLeader('dedup');
    const nc = await nats();
    const body = JSON.stringify({ id: 'req-1', command: { type: 'RegisterUser', name: 'once' } });
    const first = JSON.parse((await nc.request(leader.commands, body, { timeout: 5_000 })).string());
    const again = JSON.parse((await nc.request(leader.commands, body, { timeout: 5_000 })).string());
    assert.deepEqual(again, first);
    assert.equal(first.ok, true);
    assert.equal(leader.engine.lastSeq, 1);
    // A kept answer is a copy: the engine's bill objects are reused by later commands (issue 34).
    const credit = (id: string, amount: number) =>
      JSON.stringify({
        id,
        command: { type: 'CreditDeposit', depositId: id, userId: 1, coin: 'usdt', amount, remark: '' },
      });
    const credited = JSON.parse(
      (await nc.request(leader.commands, credit('dep-1', 7), { timeout: 5_000 })).string(),
    );
    await nc.request(leader.commands, credit('dep-2', 9), { timeout: 5_000 });
    const creditedAgain = JSON.parse(
      (await nc.request(leader.commands, credit('dep-1', 7), { timeout: 5_000 })).string(),
    );
    assert.deepEqual(creditedAgain, credited);
    assert.ok(
      credited.result.events.some(
        (e: { type: string; available: number }) => e.type === 'BalanceChanged' && e.available === 7,
      ),
    );
    assert.equal(leader.engine.lastSeq, 3);
    for (const bad of ['not json', '{}', '{"id":"x"}', '{"id":"x","command":{"name":"y"}}', 'null']) {
      const reply = JSON.parse((await nc.request(leader.commands, bad, { timeout: 5_000 })).string());
      assert.equal(reply.ok, false, bad);
      assert.match(reply.message, /./);
    }
    assert.equal(leader.engine.lastSeq, 3);
    await leader.service.close();
    await leader.sequencer.close();
  });
});
