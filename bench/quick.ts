/**
 * @module quick — `npm run bench:quick [name …]`: every benchmark in bench/ in its quick mode
 * (`--quick`: seconds, small sizes), two at a time (BENCH_QUICK_JOBS sets how many; each one's
 * output is printed whole when it ends), as CI runs them (.ci/run) so that none rots unseen. Nothing about time is asserted: a benchmark fails when it exits other than 0, when
 * it outlives its time limit (its process group is then killed), or when the last line it prints
 * is not one JSON object. Services (NATS, PostgreSQL, Redis) are reached as the tests reach them;
 * a benchmark that needs a setting (the connection cap, the rate limits) sets it itself. Quick
 * runs are never recorded in bench/results.jsonl. Names pick some (e.g. `venue ws`).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

interface QuickBench {
  readonly name: string;
  readonly file: string;
  /** Node's own flags (e.g. --expose-gc). */
  readonly node?: readonly string[];
  /** Wall time allowed, s (generous: CI machines are slow and shared). */
  readonly limitSeconds: number;
}

export const QUICK_BENCHES: readonly QuickBench[] = [
  { name: 'engine', file: 'engine.bench.ts', node: ['--expose-gc'], limitSeconds: 120 },
  { name: 'engine-ab', file: 'engine-ab.bench.ts', node: ['--expose-gc'], limitSeconds: 120 },
  { name: 'engine-alloc', file: 'engine-alloc.bench.ts', limitSeconds: 120 },
  { name: 'risk', file: 'liquidation-index.bench.ts', limitSeconds: 60 },
  { name: 'metrics', file: 'metrics.bench.ts', limitSeconds: 60 },
  { name: 'journal', file: 'journal.bench.ts', limitSeconds: 120 },
  { name: 'recovery', file: 'recovery.bench.ts', limitSeconds: 120 },
  { name: 'limits', file: 'rate-limit.bench.ts', limitSeconds: 60 },
  { name: 'http', file: 'http.bench.ts', limitSeconds: 120 },
  { name: 'ws', file: 'ws.bench.ts', limitSeconds: 120 },
  { name: 'fan-out', file: 'fan-out.bench.ts', limitSeconds: 60 },
  { name: 'venue', file: 'venue.bench.ts', limitSeconds: 180 },
  { name: 'cluster', file: 'cluster.bench.ts', limitSeconds: 180 },
  { name: 'cluster-failover', file: 'cluster-failover.bench.ts', limitSeconds: 180 },
  { name: 'soak', file: 'soak.bench.ts', limitSeconds: 120 },
  { name: 'replay', file: 'replay.bench.ts', limitSeconds: 120 },
];

interface Outcome {
  readonly name: string;
  readonly seconds: number;
  /** Why it failed, or undefined. */
  readonly failure: string | undefined;
}

/** Why `stdout`'s last non-blank line is not one JSON object, or undefined when it is. */
export function lastLineProblem(stdout: string): string | undefined {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  const last = lines.at(-1);
  if (last === undefined) return 'it printed nothing';
  try {
    const value: unknown = JSON.parse(last);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return undefined;
  } catch {
    // Not JSON: said below.
  }
  return `its last line is not one JSON object: ${last.slice(0, 120)}`;
}

function run(bench: QuickBench): Promise<Outcome> {
  const started = performance.now();
  const env = { ...process.env };
  delete env['BENCH_RECORD'];
  const child = spawn(
    process.execPath,
    [...(bench.node ?? []), join(import.meta.dirname, bench.file), '--quick'],
    // Its own process group, so that a hung benchmark is killed with every process it started.
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let stdout = '';
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  let timedOut = false;
  const killGroup = (): void => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, bench.limitSeconds * 1000);
  // Stopped itself (CI's own limit, ^C): the benchmark's group goes too, not left running detached.
  const onSignal = (signal: NodeJS.Signals): void => {
    killGroup();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      const seconds = Math.round((performance.now() - started) / 100) / 10;
      process.stdout.write(
        `\n── bench:quick: ${bench.name} (${bench.file} --quick, limit ${bench.limitSeconds} s, ${seconds} s)\n${output}`,
      );
      const failure = timedOut
        ? `it ran past its limit of ${bench.limitSeconds} s and was killed`
        : code !== 0
          ? `it exited with ${code ?? signal}`
          : lastLineProblem(stdout);
      resolve({ name: bench.name, seconds, failure });
    });
  });
}

/**
 * How many benchmarks run at once: `BENCH_QUICK_JOBS` (a whole number from 1), else 2 — the quick
 * runs time nothing, so two share this machine's two cores and CI takes half the time.
 */
export function quickJobs(setting: string | undefined): number {
  if (setting === undefined || setting === '') return 2;
  const jobs = Number(setting);
  if (!Number.isInteger(jobs) || jobs < 1) {
    throw new RangeError(`BENCH_QUICK_JOBS must be a whole number from 1, not '${setting}'`);
  }
  return jobs;
}

async function main(names: readonly string[]): Promise<void> {
  const unknown = names.filter((n) => !QUICK_BENCHES.some((b) => b.name === n));
  if (unknown.length > 0) {
    console.error(
      `bench:quick: no benchmark ${unknown.join(', ')}; they are ${QUICK_BENCHES.map((b) => b.name).join(', ')}`,
    );
    process.exit(2);
  }
  const chosen = names.length === 0 ? QUICK_BENCHES : QUICK_BENCHES.filter((b) => names.includes(b.name));
  let jobs: number;
  try {
    jobs = quickJobs(process.env['BENCH_QUICK_JOBS']);
  } catch (e) {
    console.error(`bench:quick: ${(e as Error).message}`);
    process.exit(2);
  }
  const started = performance.now();
  const outcomes: Outcome[] = [];
  const queue = [...chosen];
  const lane = async (): Promise<void> => {
    for (let bench = queue.shift(); bench !== undefined; bench = queue.shift())
      outcomes.push(await run(bench));
  };
  await Promise.all(Array.from({ length: Math.min(jobs, chosen.length) }, lane));
  outcomes.sort(
    (a, b) => chosen.findIndex((c) => c.name === a.name) - chosen.findIndex((c) => c.name === b.name),
  );
  console.log('\nbench:quick:');
  for (const o of outcomes) {
    console.log(
      `  ${o.failure === undefined ? 'ok  ' : 'FAIL'} ${o.name.padEnd(17)} ${o.seconds} s${o.failure ? ` — ${o.failure}` : ''}`,
    );
  }
  const total = outcomes.reduce((sum, o) => sum + o.seconds, 0);
  const wall = (performance.now() - started) / 1000;
  const failed = outcomes.filter((o) => o.failure !== undefined);
  console.log(
    `  ${outcomes.length - failed.length} of ${outcomes.length} ran, ${Math.round(total)} s in all, ` +
      `${Math.round(wall)} s of wall time ${jobs} at a time`,
  );
  if (failed.length > 0) process.exit(1);
}

if (import.meta.main) await main(process.argv.slice(2));
