/**
 * Issue 18, `bourse history`: the history store (PostgreSQL, a database of the test's own) written
 * by its own process from the journal's stream (a private nats-server with `sync_interval:
 * always`), while the engine runs with `--write-history=false`. The role is killed with SIGKILL
 * mid-stream and started again: it goes on from the store's checkpoint, and the store holds
 * exactly the rows of a writer that was never interrupted. After the journal moves back to
 * files, `bourse rebuild-history` rebuilds the same rows on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { offlineCommands } from '../../src/cli/offline.ts';
import { startHistoryRole } from '../../src/cluster/history-role.ts';
import { readVenueIdentity } from '../../src/config/venue-identity.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { PgHistoryStore } from '../../src/store/pg-history-store.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';
import { createTestDatabase, dumpHistory, pgSkipReason, type TestDatabase } from '../fixtures/postgres.ts';
import { startRole, type RoleProcess } from '../fixtures/role-process.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { until } from '../fixtures/until.ts';
import { admin, createTrader, tradeRounds } from '../fixtures/zb-client.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url, 10 * 60_000);

const ENGINE_ROLE = join(import.meta.dirname, '..', '..', 'src', 'cluster', 'engine-role.ts');
const skip = natsSkipReason() || (await pgSkipReason());
const root = mkdtempSync(join(tmpdir(), 'bourse-history-role-'));
const dataDir = join(root, 'engine');
const quiet = { out: (): void => undefined, err: (): void => undefined };
let nats: NatsServer | undefined;
let db: TestDatabase | undefined;
let engine: ServerProcess | undefined;
let role: RoleProcess | undefined;
let journalUrl = '';
let historyUrl = '';

before(async () => {
  if (skip !== false) return;
  nats = await startNatsServer();
  db = await createTestDatabase();
  journalUrl = `${nats.url}?stream=HISTORY_${process.pid}&subject=hist.journal&monitor=${nats.monitorUrl}`;
  historyUrl = `${db.url}?schema=live`;
  engine = await startServer(
    dataDir,
    [
      '--journal-url',
      journalUrl,
      '--rate-limits=false',
      '--history-url',
      historyUrl,
      '--write-history=false',
    ],
    {},
    [],
    ENGINE_ROLE,
  );
});

after(async () => {
  await role?.kill();
  await engine?.kill();
  await nats?.stop();
  await db?.drop();
  rmSync(root, { recursive: true, force: true });
});

async function checkpoint(schema: string): Promise<number> {
  const store = await PgHistoryStore.open((db as TestDatabase).url, { schema });
  try {
    return await store.checkpoint();
  } finally {
    await store.close();
  }
}

async function engineSeq(): Promise<number> {
  const server = engine as ServerProcess;
  return (await admin(server.adminBase, server.token, '/admin/state', [])).lastSeq as number;
}

const trade = tradeRounds;

const roleFlags = (): string[] => [
  '--data',
  dataDir,
  '--journal-url',
  journalUrl,
  '--history-url',
  historyUrl,
];

describe('bourse history: the history store written by its own process (issue 18)', { skip }, () => {
  test('killed and restarted mid-stream, the role writes every row once; the engine writes none', async () => {
    const server = engine as ServerProcess;
    assert.match(server.output(), /written by a `bourse history` process \(--write-history=false\)/);
    const ann = await createTrader(server, 'ann', [['usdt', '50000']]);
    const ben = await createTrader(server, 'ben', [['btc', '5']]);
    role = await startRole('history', roleFlags());
    assert.equal(role.ready, '1', 'a new store is written from seq 1');
    await trade(ann, ben, 10);
    await admin(server.adminBase, server.token, '/admin/snapshot', []);
    // Killed while orders flow and it writes them.
    const flowing = trade(ann, ben, 20);
    const started = await engineSeq();
    await until('the role to write while orders flow', async () =>
      (await checkpoint('live')) > started ? true : undefined,
    );
    await (role as RoleProcess).kill();
    await flowing;
    const before = await checkpoint('live');
    assert.ok(before < (await engineSeq()), 'the role was killed before it had written everything');

    // The engine goes on without it and writes no history itself.
    await trade(ann, ben, 10);
    assert.equal(await checkpoint('live'), before);
    const read = (await ann.call('getOrdersIgnoreTradeType', [
      ['currency', 'btc_usdt'],
      ['pageIndex', '1'],
      ['pageSize', '50'],
    ])) as unknown as unknown[];
    assert.ok(read.length > 0, 'the engine reads the history the role wrote');

    // Started again, the role goes on from the store's checkpoint, its replica from the snapshot.
    role = await startRole('history', roleFlags());
    assert.equal(role.ready, String(before + 1));
    assert.match(role.output(), /replica from seq [1-9]\d*/);
    await trade(ann, ben, 10);
    const last = await engineSeq();
    await until('the restarted role to catch up', async () =>
      (await checkpoint('live')) >= last ? true : undefined,
    );

    // The same stream written in one go, from genesis, into another schema: the same rows.
    const whole = await startHistoryRole({
      identity: readVenueIdentity(dataDir) as NonNullable<ReturnType<typeof readVenueIdentity>>,
      store: { kind: 'postgres', url: `${(db as TestDatabase).url}?schema=whole` },
      servers: (nats as NatsServer).url,
      stream: `HISTORY_${process.pid}`,
      subject: 'hist.journal',
      log: SILENT_LOG,
    });
    assert.equal(whole.startedAt, 0);
    await whole.replica.whenApplied(last);
    await whole.drain();
    await whole.close();
    const live = await dumpHistory((db as TestDatabase).url, 'live');
    assert.equal((live['orders'] as unknown[]).length, 100);
    assert.ok((live['trades'] as unknown[]).length >= 40);
    assert.deepEqual(await dumpHistory((db as TestDatabase).url, 'whole'), live);

    // Back to files (offline), rebuild-history on PostgreSQL gives the same rows again.
    assert.equal(await role.stop(), 0);
    role = undefined;
    assert.equal(await server.stop(), 0);
    engine = undefined;
    assert.equal(await offlineCommands.journalCopy(dataDir, quiet, true, 'file'), 0);
    assert.equal(await offlineCommands.rebuildHistory(dataDir, quiet, true, historyUrl), 0);
    assert.deepEqual(await dumpHistory((db as TestDatabase).url, 'live'), live);
  });

  test('bourse history refuses to start without a stream or a venue, saying why', async () => {
    await assert.rejects(
      startRole('history', ['--data', dataDir, '--history-url', historyUrl]),
      /exited \(1\)[^]*bourse history needs --journal-url/,
    );
    await assert.rejects(
      startRole('history', ['--data', join(root, 'nowhere'), '--journal-url', journalUrl]),
      /exited \(1\)[^]*holds no venue\.json: copy it from the engine's data directory/,
    );
  });
});
