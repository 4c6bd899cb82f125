/**
 * Issue 18, the long suite's failover: ten rounds of kill -9 of the leading engine while orders
 * flow through two gateways, each round with a new standby that takes over; after each round the
 * journal holds every acknowledged order once, no request twice, money conserved, every replica
 * at the leader's state hash (test/fixtures/failover-cluster.ts). The takeover times are printed;
 * bench/cluster-failover.bench.ts measures them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { killRound, startFailoverCluster, type FailoverCluster } from '../fixtures/failover-cluster.ts';
import { natsSkipReason } from '../fixtures/nats-server.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url, 30 * 60_000);

const ROUNDS = 10;
const skip = natsSkipReason();
let cluster: FailoverCluster | undefined;

before(async () => {
  if (skip === false) cluster = await startFailoverCluster();
});
after(async () => {
  await cluster?.close();
});

describe('failover, long (issue 18)', { skip }, () => {
  test(`${ROUNDS} rounds of kill -9 under load: nothing acknowledged lost or applied twice`, async () => {
    let acknowledged = 0;
    for (let i = 1; i <= ROUNDS; i++) {
      const round = await killRound(cluster as FailoverCluster, 700);
      acknowledged += round.report.acknowledged.length;
      console.log(
        `round ${i}: led ${round.leadingMs} ms, served ${Math.round(round.servingMs)} ms after the kill; ` +
          `${round.report.acknowledged.length} acknowledged, ${round.report.notAccepted} NOT_ACCEPTED; seq ${round.seq}`,
      );
    }
    assert.ok(acknowledged > 0);
  });
});
