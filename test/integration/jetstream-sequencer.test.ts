/**
 * The sequencer and recovery on the JetStream journal: a venue's commands go to a stream of a
 * private nats-server (`sync_interval: always`); after a clean close, and after kill -9 of the
 * process that wrote them, recovery from the stream gives the same state hash.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import { BUY, SELL, type Command } from '../../src/domain/commands.ts';
import { JetStreamJournal } from '../../src/journal/jetstream-journal.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { Sequencer } from '../../src/sequencer/sequencer.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { reapOnExit } from '../fixtures/children.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const skip = natsSkipReason();
let server: NatsServer | undefined;
before(async () => {
  if (skip === false) server = await startNatsServer();
});
after(() => server?.stop());

const sequencerOptions = {
  clock: Date.now,
  maxInFlight: 100_000,
  snapshotEveryCommands: 0,
  snapshotEveryMs: 0,
  keepSnapshots: 2,
  pruneJournal: false,
  log: SILENT_LOG,
};

const journalOptions = (stream: string) => ({
  servers: (server as NatsServer).url,
  monitorUrls: (server as NatsServer).monitorUrl,
  stream,
  subject: `journal.${stream}`,
});

/** Two funded traders, then `rounds` of crossing orders, submitted a burst at a time. */
async function trade(sequencer: Sequencer, rounds: number): Promise<void> {
  const a = (await sequencer.submit({ type: 'RegisterUser', name: 'a' })).userId as number;
  const b = (await sequencer.submit({ type: 'RegisterUser', name: 'b' })).userId as number;
  const credit = (userId: number, coin: string, amount: number): Command => ({
    type: 'CreditDeposit',
    depositId: `${userId}-${coin}`,
    userId,
    coin,
    amount,
    remark: '',
  });
  await Promise.all([
    sequencer.submit(credit(a, 'usdt', 10 ** 13)),
    sequencer.submit(credit(b, 'btc', 10 ** 11)),
  ]);
  const place = {
    type: 'PlaceOrder',
    market: 'btc_usdt',
    kind: 'limit',
    acctType: 0,
    clientOrderId: '',
  } as const;
  for (let i = 0; i < rounds; i++) {
    await Promise.all([
      sequencer.submit({ ...place, userId: b, side: SELL, price: 3_000_000 + (i % 13) * 100, amount: 10 }),
      sequencer.submit({ ...place, userId: a, side: BUY, price: 3_000_000 + (i % 7) * 100, amount: 7 }),
      sequencer.submit({ ...place, userId: a, side: BUY, price: 2_990_000, amount: 3 }),
    ]);
  }
}

describe('sequencer on the JetStream journal', { skip }, () => {
  test('commands are acknowledged once the stream has them; recovery from the stream gives the same state', async () => {
    const stream = `SEQ_${process.pid}_close`;
    const journal = await JetStreamJournal.open(journalOptions(stream));
    const { engine } = await recover({
      genesis: DEFAULT_VENUE,
      journal,
      snapshots: undefined,
      log: SILENT_LOG,
    });
    const sequencer = new Sequencer(engine, journal, undefined, sequencerOptions);
    await trade(sequencer, 200);
    assert.equal(journal.durableSeq, sequencer.lastSeq);
    engine.assertInvariants();
    const hash = engine.stateHash();
    const lastSeq = engine.lastSeq;
    await sequencer.close();

    const reopened = await JetStreamJournal.open(journalOptions(stream));
    const recovered = await recover({
      genesis: DEFAULT_VENUE,
      journal: reopened,
      snapshots: undefined,
      log: SILENT_LOG,
    });
    assert.equal(recovered.replayed, lastSeq);
    assert.equal(recovered.engine.stateHash(), hash);
    recovered.engine.assertInvariants();
    // And the venue goes on from there on the same stream.
    const again = new Sequencer(recovered.engine, reopened, undefined, sequencerOptions);
    assert.equal((await again.submit({ type: 'RegisterUser', name: 'c' })).result, 'OK');
    await again.close();
  });

  test('kill -9 of the writing process: every acknowledged command is in the stream, and replay reaches the same states', async () => {
    const stream = `SEQ_${process.pid}_kill`;
    // The child runs a sequencer on the stream and prints "seq hash" after each applied batch.
    const s = server as NatsServer;
    const child = spawn(
      process.execPath,
      [
        new URL('../fixtures/jetstream-writer.ts', import.meta.url).pathname,
        s.url,
        s.monitorUrl,
        stream,
        `journal.${stream}`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    reapOnExit(child);
    const closed = new Promise((resolve) => child.once('close', resolve));
    const reported = new Map<number, string>();
    let last = 0;
    let text = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const lines = text.split('\n');
        text = lines.pop() ?? '';
        for (const line of lines) {
          const [seq, hash] = line.split(' ') as [string, string];
          reported.set(Number(seq), hash);
          last = Math.max(last, Number(seq));
        }
        if (last >= 3_000) resolve();
      });
      child.on('exit', () => resolve());
    });
    child.kill('SIGKILL');
    await closed;
    assert.ok(last >= 3_000, `the child applied only ${last} commands`);

    const journal = await JetStreamJournal.open(journalOptions(stream));
    assert.ok(
      journal.durableSeq >= last,
      `the stream ends at ${journal.durableSeq}, before the acknowledged ${last}`,
    );
    let compared = 0;
    const recovered = await recover({
      genesis: DEFAULT_VENUE,
      journal,
      snapshots: undefined,
      log: SILENT_LOG,
      afterEach: (seq, engine) => {
        const want = reported.get(seq);
        if (want === undefined) return;
        assert.equal(engine.stateHash(), want, `state hash at seq ${seq}`);
        compared++;
      },
    });
    assert.equal(compared, reported.size);
    recovered.engine.assertInvariants();
    await journal.close();
  });
});
