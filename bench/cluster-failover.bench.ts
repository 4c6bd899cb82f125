/**
 * @module cluster-failover.bench — how long a failover takes in the documented deployment
 * (docs/scale-out.md, "The deployment" and "Hot standby and failover"; issues 18 and 30): every
 * role its own process (test/fixtures/cluster.ts): a leading `bourse engine` and a standby, two
 * `bourse gateway`s, `bourse history` writing PostgreSQL, the rate limits in Redis, the journal
 * on a private nats-server with `sync_interval: always`. Orders flow through both gateways (2 at
 * a time each, 16 keys) while the leader is killed with SIGKILL, `rounds` times, each round with
 * a new standby. Every round checks the journal (test/fixtures/journal-check.ts: every
 * acknowledged order in it exactly once, no request twice, money conserved, the leader at the
 * journal's state hash).
 *
 * The failover time of a round is from the kill to the first order acknowledged again through
 * each gateway (the later of the two; both are reported), among orders sent after the kill.
 * Also per round, from the kill: when the standby took the lapsed lease and when it logged that
 * it leads. Prints a line per round, a summary and, last, one JSON line.
 *
 * `--quick` runs 3 rounds (for CI; nothing about time is asserted); else FAILOVER_ROUNDS
 * (default 20). FAILOVER_LEASE_TTL_MS sets the lease (default 1000);
 * FAILOVER_LOG_DIR, a directory, receives each new leader's log. Needs NATS (nats-server on
 * PATH), PostgreSQL and Redis as the integration tests do (test/fixtures/postgres.ts,
 * redis-server.ts). `runFailoverBench` is exported for `npm run bench:cluster`.
 */
import { finish, QUICK, sized } from './results.ts';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startCluster, type Cluster } from '../test/fixtures/cluster.ts';
import type { EngineCandidate } from '../test/fixtures/engine-candidate.ts';
import { checkJournal } from '../test/fixtures/journal-check.ts';
import { orderLoad } from '../test/fixtures/order-load.ts';
import { readVenueIdentity, type VenueIdentity } from '../src/config/venue-identity.ts';
import { admin, createTrader, ZbClient } from '../test/fixtures/zb-client.ts';
import type { RoleProcess } from '../test/fixtures/role-process.ts';

const TRADERS = 16;
const EACH = 1_000_000n;

interface Spread {
  readonly median: number;
  readonly worst: number;
}

export interface FailoverFigures {
  readonly bench: 'cluster-failover';
  readonly quick: boolean;
  readonly rounds: number;
  readonly leaseTtlMs: number;
  readonly deployment: string;
  /** Kill → the first order acknowledged again through each gateway (the later of the two). */
  readonly failover: Spread;
  /** The same, per gateway. */
  readonly perGateway: readonly Spread[];
  /** Kill → the standby's "taking over" line, and its "engine: leading stream" line. */
  readonly lease: Spread;
  readonly leading: Spread;
  readonly acknowledged: number;
  readonly notAccepted: number;
  readonly limited: number;
  readonly loadAverage: string;
}

interface Round {
  readonly gateways: readonly number[];
  readonly leaseMs: number;
  readonly leadingMs: number;
  readonly acknowledged: number;
  readonly notAccepted: number;
  readonly limited: number;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const spread = (xs: readonly number[]): Spread => ({
  median: Math.round(median(xs)),
  worst: Math.round(Math.max(...xs)),
});
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The standby of the round: the newest engine, when it stands by; else a new one. */
async function standbyOf(cluster: Cluster): Promise<EngineCandidate> {
  const last = cluster.engines.at(-1) as EngineCandidate;
  const leads = /engine: leading stream/.test(last.output());
  return leads || last.child.exitCode !== null ? cluster.addStandby() : last;
}

/** One kill -9 of the leader under load; the journal is checked afterwards. */
async function killRound(
  cluster: Cluster,
  traders: readonly ZbClient[],
  identity: VenueIdentity,
  acknowledged: string[],
): Promise<Round> {
  const old = cluster.engines.find((e) => e.child.pid === cluster.engine.child.pid) as EngineCandidate;
  const standby = await standbyOf(cluster);
  const bases = cluster.gateways.map((g: RoleProcess) => g.ready);
  const load = orderLoad(
    bases,
    traders,
    (i) => [
      ['currency', 'zb_qc'],
      ['tradeType', String(i % 2)],
      ['price', (1 + (i % 7) / 100).toFixed(4)],
      ['amount', '10.00'],
    ],
    2,
  );
  await pause(600);
  const killedAt = performance.now();
  const killedWall = Date.now();
  await old.kill();
  await cluster.takeOver(standby);
  await pause(700);
  const report = await load.stop();
  if (report.other.length > 0) throw new Error(`unexpected answers: ${report.other.slice(0, 3).join('; ')}`);
  const after = report.acknowledged.filter((a) => a.sentAt > killedAt);
  const gateways = bases.map((_, g) => {
    const first = Math.min(...after.filter((a) => a.gateway === g).map((a) => a.at));
    if (!Number.isFinite(first))
      throw new Error(`no order sent through gateway ${g} after the kill was acknowledged`);
    return first - killedAt;
  });
  acknowledged.push(...report.acknowledged.map((a) => a.id));
  const state = await admin(cluster.engine.adminBase, cluster.engine.token, '/admin/state', []);
  const seq = state.lastSeq as number;
  const stream = /stream=([^&]+)/.exec(cluster.journalUrl)?.[1] as string;
  const subject = /subject=([^&]+)/.exec(cluster.journalUrl)?.[1] as string;
  await checkJournal({
    servers: cluster.nats.url,
    stream,
    subject,
    genesis: identity.genesis,
    seq,
    acknowledged,
    credited: [
      ['zb', EACH * BigInt(TRADERS)],
      ['qc', EACH * BigInt(TRADERS)],
    ],
    hashes: async () => {
      for (const base of bases) await cluster.settled(base);
      return [state.stateHash as string];
    },
  });
  const dump = process.env['FAILOVER_LOG_DIR'];
  if (dump !== undefined) writeFileSync(join(dump, `leader-${standby.child.pid}.log`), standby.output());
  const loggedAt = (what: string): number => {
    const line = new RegExp(`\\{[^\\n]*${what}[^\\n]*\\}`).exec(standby.output())?.[0] ?? '{}';
    return Date.parse((JSON.parse(line) as { time?: string }).time ?? '') - killedWall;
  };
  return {
    gateways,
    leaseMs: loggedAt('taking over: the lease'),
    leadingMs: loggedAt('engine: leading stream'),
    acknowledged: report.acknowledged.length,
    notAccepted: report.notAccepted,
    limited: report.limited,
  };
}

/** Runs `rounds` kill -9 failovers in the documented deployment and returns their figures. */
export async function runFailoverBench(
  rounds = 20,
  leaseTtlMs = 1_000,
  log: (line: string) => void = console.log,
  quick = false,
): Promise<FailoverFigures> {
  const cluster = await startCluster({ standby: true, engineFlags: ['--lease-ttl-ms', String(leaseTtlMs)] });
  const done: Round[] = [];
  const loads: number[] = [];
  try {
    const identity = readVenueIdentity(cluster.dataDir) as VenueIdentity;
    const traders: ZbClient[] = [];
    for (let i = 0; i < TRADERS; i++) {
      const t = await createTrader(cluster.engine, `fo-${i}`, [
        ['zb', String(EACH)],
        ['qc', String(EACH)],
      ]);
      traders.push(t);
    }
    for (const g of cluster.gateways) await cluster.settled(g.ready);
    const acknowledged: string[] = [];
    for (let i = 1; i <= rounds; i++) {
      loads.push(loadavg()[0] as number);
      const round = await killRound(cluster, traders, identity, acknowledged);
      done.push(round);
      log(
        `round ${i}: acknowledged again through gateway A ${Math.round(round.gateways[0] as number)} ms, ` +
          `B ${Math.round(round.gateways[1] as number)} ms after the kill (lease taken ${round.leaseMs} ms, ` +
          `leading ${round.leadingMs} ms; ${round.acknowledged} orders acknowledged, ${round.notAccepted} NOT_ACCEPTED, ` +
          `${round.limited} over a rate limit; load ${(loadavg()[0] as number).toFixed(1)})`,
      );
    }
  } finally {
    await cluster.stop();
  }
  return {
    bench: 'cluster-failover',
    quick,
    rounds,
    leaseTtlMs,
    deployment:
      'engine leader + standby, 2 gateways, bourse history, each its own process; history on PostgreSQL, limits in Redis, JetStream sync_interval: always',
    failover: spread(done.map((r) => Math.max(...r.gateways))),
    perGateway: [0, 1].map((g) => spread(done.map((r) => r.gateways[g] as number))),
    lease: spread(done.map((r) => r.leaseMs)),
    leading: spread(done.map((r) => r.leadingMs)),
    acknowledged: done.reduce((n, r) => n + r.acknowledged, 0),
    notAccepted: done.reduce((n, r) => n + r.notAccepted, 0),
    limited: done.reduce((n, r) => n + r.limited, 0),
    loadAverage: `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
  };
}

if (import.meta.main) {
  const quick = QUICK;
  const rounds = Number(process.env['FAILOVER_ROUNDS'] ?? sized(20, 3));
  const ttl = Number(process.env['FAILOVER_LEASE_TTL_MS'] ?? 1_000);
  const result = await runFailoverBench(rounds, ttl, console.log, quick);
  console.log(
    `failover over ${result.rounds} rounds (lease ${result.leaseTtlMs} ms, load average ${result.loadAverage}): ` +
      `acknowledged again through both gateways median ${result.failover.median} ms, worst ${result.failover.worst} ms after the kill ` +
      `(lease taken ${result.lease.median}/${result.lease.worst} ms, leading ${result.leading.median}/${result.leading.worst} ms); ` +
      `${result.acknowledged} orders acknowledged, ${result.notAccepted} NOT_ACCEPTED`,
  );
  finish('cluster-failover', { ...result });
}
