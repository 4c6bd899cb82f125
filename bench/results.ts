/**
 * @module results — what every benchmark in bench/ shares at its end, and the record of its runs:
 * - `QUICK` (`--quick` on the command line): the one convention for a benchmark's smoke mode
 *   (seconds, small sizes; its figures are not to be quoted). bench/quick.ts runs every benchmark
 *   so, in CI.
 * - `finish(bench, figures)`: prints the figures as the last line, one JSON object, and with
 *   `BENCH_RECORD=1` (never in quick mode) appends a record of the run to bench/results.jsonl:
 *   the figures with the commit (and whether the tree had changes), the date, the machine and its
 *   load average, so that `npm run bench:compare <bench>` (bench/compare.ts) can set the last runs
 *   side by side.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { cpus, hostname, loadavg, totalmem, uptime } from 'node:os';
import { join } from 'node:path';

/** `--quick`: a smoke run of seconds on small sizes, for CI; its figures are not to be quoted. */
export const QUICK = process.argv.includes('--quick');

/** The full-size value, or the quick one in quick mode. */
export const sized = <T>(full: T, quick: T): T => (QUICK ? quick : full);

/** Where runs are recorded (one JSON object a line). */
export const RESULTS_FILE = join(import.meta.dirname, 'results.jsonl');

/** One recorded run of a benchmark. */
export interface BenchRecord {
  readonly bench: string;
  /** The commit checked out (`git rev-parse HEAD`), or 'unknown' outside a git checkout. */
  readonly commit: string;
  /** Whether the work tree had uncommitted changes to tracked files. */
  readonly dirty: boolean;
  /** ISO 8601, UTC. */
  readonly date: string;
  readonly machine: {
    readonly host: string;
    readonly cpu: string;
    readonly cores: number;
    readonly memoryGiB: number;
    readonly node: string;
  };
  /** 1, 5 and 15 minute load averages when the run ended. */
  readonly loadAverage: readonly number[];
  /** Seconds since the machine booted. */
  readonly uptimeSeconds: number;
  readonly figures: Readonly<Record<string, unknown>>;
}

function git(args: readonly string[]): string | undefined {
  const r = spawnSync('git', args, { cwd: import.meta.dirname, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The record of a run ending now. */
export function runRecord(bench: string, figures: Readonly<Record<string, unknown>>): BenchRecord {
  return {
    bench,
    commit: git(['rev-parse', 'HEAD']) ?? 'unknown',
    dirty: (git(['status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
    date: new Date().toISOString(),
    machine: {
      host: hostname(),
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    loadAverage: loadavg().map((x) => Number(x.toFixed(2))),
    uptimeSeconds: Math.round(uptime()),
    figures,
  };
}

/** Whether this run is to be recorded: `BENCH_RECORD=1`, and not in quick mode. */
export const recording = (): boolean => process.env['BENCH_RECORD'] === '1' && !QUICK;

/**
 * The end of a benchmark: `figures` as the last line printed (one JSON object), and, when
 * recording, the run appended to bench/results.jsonl (`file`, for tests).
 */
export function finish(
  bench: string,
  figures: Readonly<Record<string, unknown>>,
  file: string = RESULTS_FILE,
): void {
  if (recording()) {
    appendFileSync(file, `${JSON.stringify(runRecord(bench, figures))}\n`);
    console.error(`recorded in ${file}`);
  }
  console.log(JSON.stringify(figures));
}
