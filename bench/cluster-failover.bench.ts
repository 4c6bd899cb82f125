/**
 * @module cluster-failover.bench — how long a failover takes (issue 18, docs/scale-out.md "Hot
 * standby and failover"): a leading `bourse engine`, a standby and two gateways on a private
 * nats-server with `sync_interval: always` (test/fixtures/failover-cluster.ts); orders flow
 * through both gateways (3 at a time each) while the leader is killed with SIGKILL, `ROUNDS`
 * times (env FAILOVER_ROUNDS, default 10; `--quick`: 1), each round with a new standby. Every round checks the
 * journal (every acknowledged order once, money conserved, replicas at the leader's hash).
 *
 * Per round, from the kill: when the standby took the lapsed lease, when it logged that it leads
 * (fenced, tail replayed, listening, subscribed), and when the first order sent after the kill
 * was answered (the venue serves again). Prints a summary and, last, one JSON line.
 * `runFailoverBench` is exported for `npm run bench:cluster`.
 */
import { killRound, startFailoverCluster, type KillRound } from '../test/fixtures/failover-cluster.ts';
import { finish, QUICK, sized } from './results.ts';

export interface FailoverFigures {
  readonly rounds: number;
  readonly leaseTtlMs: number;
  /** Median and worst, ms from the kill. */
  readonly lease: { readonly median: number; readonly worst: number };
  readonly leading: { readonly median: number; readonly worst: number };
  readonly serving: { readonly median: number; readonly worst: number };
  readonly notAccepted: number;
  readonly acknowledged: number;
  readonly loadAverage: string;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const figures = (xs: readonly number[]): { median: number; worst: number } => ({
  median: Math.round(median(xs)),
  worst: Math.round(Math.max(...xs)),
});

/** Runs `rounds` kill -9 failovers and returns their figures. */
export async function runFailoverBench(
  rounds = 10,
  leaseTtlMs = 1_000,
  log: (line: string) => void = console.log,
): Promise<FailoverFigures> {
  const { loadavg } = await import('node:os');
  const cluster = await startFailoverCluster({ leaseTtlMs });
  const done: KillRound[] = [];
  const loads: number[] = [];
  try {
    for (let i = 1; i <= rounds; i++) {
      loads.push(loadavg()[0] as number);
      const round = await killRound(cluster, 700);
      done.push(round);
      log(
        `round ${i}: lease taken ${round.leaseMs} ms, leading ${round.leadingMs} ms, serving ${Math.round(round.servingMs)} ms ` +
          `after the kill (${round.report.acknowledged.length} orders acknowledged, ${round.report.notAccepted} NOT_ACCEPTED)`,
      );
    }
  } finally {
    await cluster.close();
  }
  return {
    rounds,
    leaseTtlMs,
    lease: figures(done.map((r) => r.leaseMs)),
    leading: figures(done.map((r) => r.leadingMs)),
    serving: figures(done.map((r) => r.servingMs)),
    notAccepted: done.reduce((n, r) => n + r.report.notAccepted, 0),
    acknowledged: done.reduce((n, r) => n + r.report.acknowledged.length, 0),
    loadAverage: `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
  };
}

if (import.meta.main) {
  const rounds = Number(process.env['FAILOVER_ROUNDS'] ?? sized(10, 1));
  const result = await runFailoverBench(rounds, Number(process.env['FAILOVER_LEASE_TTL_MS'] ?? 1_000));
  console.log(
    `failover over ${result.rounds} rounds (lease ${result.leaseTtlMs} ms, load average ${result.loadAverage}): ` +
      `serving again median ${result.serving.median} ms, worst ${result.serving.worst} ms after the kill ` +
      `(lease taken ${result.lease.median}/${result.lease.worst} ms, leading ${result.leading.median}/${result.leading.worst} ms); ` +
      `${result.acknowledged} orders acknowledged, ${result.notAccepted} NOT_ACCEPTED`,
  );
  finish('cluster-failover', { bench: 'cluster-failover', quick: QUICK, ...result });
}
