/**
 * Issue 18, hot standby and failover: a leader and a standby (`bourse engine` processes,
 * src/cluster/engine-role.ts) and two gateways on a private nats-server with `sync_interval:
 * always`. The leader is killed with SIGKILL while orders flow through both gateways: the standby
 * takes over and serves, every acknowledged order is in the journal once, no request is journaled
 * twice, money is conserved and every replica holds the new leader's state. Then a leader is
 * paused (SIGSTOP) past its lease: a new standby takes over (fencing the stream), and the old
 * leader, resumed, steps down (its lease is gone; an append it made would be refused by the
 * fence, src/journal/jetstream-journal.test.ts) and exits 1; the journal check shows nothing of
 * it after the fence. Takeover times are the benchmark's (bench/cluster-failover.bench.ts), not
 * asserted here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { natsSkipReason } from '../fixtures/nats-server.ts';
import { whenLeading } from '../fixtures/engine-candidate.ts';
import { killRound, startFailoverCluster, type FailoverCluster } from '../fixtures/failover-cluster.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url, 10 * 60_000);

const skip = natsSkipReason();
let cluster: FailoverCluster | undefined;

before(async () => {
  if (skip === false) cluster = await startFailoverCluster();
});
after(async () => {
  await cluster?.close();
});

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('hot standby and failover (issue 18)', { skip }, () => {
  test('kill -9 of the leader under load: the standby takes over; acknowledged orders once, money conserved', async () => {
    const round = await killRound(cluster as FailoverCluster);
    assert.ok(round.report.acknowledged.length > 0);
    console.log(
      `failover: ${round.report.acknowledged.length} orders acknowledged, ${round.report.notAccepted} NOT_ACCEPTED; ` +
        `the standby led ${round.leadingMs} ms and served ${Math.round(round.servingMs)} ms after the kill; journal at seq ${round.seq}`,
    );
  });

  test('a leader paused past its lease is replaced; resumed, it steps down and exits, and the stream holds nothing of it after the fence', async () => {
    const c = cluster as FailoverCluster;
    const old = c.leader();
    const standby = await c.addStandby();
    const load = c.load(1);
    await pause(300);
    old.pause();
    await whenLeading(standby);
    await pause(500);
    old.resume();
    const code = await old.exited;
    const report = await load.stop();
    assert.equal(code, 1, old.output());
    const said = old.output();
    assert.match(said, /stepping down|deposed/);
    assert.deepEqual(report.other, []);
    await c.check([report]);
    console.log(
      `pause: the old leader said: ${/"msg":"(stepping down[^"]*|stopping: journal failed[^"]*)"/.exec(said)?.[1]}`,
    );
  });
});

test('bourse engine refuses a lease it cannot keep, before it connects to anything', () => {
  const role = join(import.meta.dirname, '..', '..', 'src', 'cluster', 'engine-role.ts');
  for (const bad of ['5', 'soon', '1.5']) {
    const run = spawnSync(
      process.execPath,
      [role, '--journal-url', 'nats://127.0.0.1:1', '--lease-ttl-ms', bad],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    assert.equal(run.status, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `--lease-ttl-ms must be an integer of at least 100 \\(ms\\), not ${bad.replace('.', '\\.')}`,
      ),
    );
  }
});
