/**
 * @module compare — `npm run bench:compare <bench> [--last N]`: the last N (default 5) recorded
 * runs of one benchmark (bench/results.jsonl, written by runs with `BENCH_RECORD=1`) side by side,
 * one row per figure, one column per run (oldest first), headed by the commit, the date and the
 * load average, so that a regression is one command away. `--file <path>` reads another record.
 * Figures that are objects or arrays are flattened into `a.b` rows.
 */
import { existsSync, readFileSync } from 'node:fs';
import { RESULTS_FILE, type BenchRecord } from './results.ts';

/**
 * The records in a results.jsonl text, in file order. Blank lines are skipped; a line that is not
 * a record (not JSON, or without bench, commit, date and figures) is an error naming its line.
 */
export function parseResults(text: string): BenchRecord[] {
  const records: BenchRecord[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`line ${i + 1} is not JSON: ${line.slice(0, 60)}`);
    }
    const r = value as Partial<BenchRecord> | null;
    if (
      r === null ||
      typeof r !== 'object' ||
      typeof r.bench !== 'string' ||
      typeof r.commit !== 'string' ||
      typeof r.date !== 'string' ||
      typeof r.figures !== 'object' ||
      r.figures === null
    ) {
      throw new Error(`line ${i + 1} is not a benchmark record (bench, commit, date, figures)`);
    }
    records.push(r as BenchRecord);
  });
  return records;
}

/** `figures` as `[name, value]` rows, nested objects and arrays flattened into `a.b` / `a.0`. */
export function flatten(figures: Readonly<Record<string, unknown>>, prefix = ''): [string, string][] {
  const rows: [string, string][] = [];
  for (const [key, value] of Object.entries(figures)) {
    const name = prefix === '' ? key : `${prefix}.${key}`;
    if (value !== null && typeof value === 'object') {
      rows.push(...flatten(value as Record<string, unknown>, name));
    } else {
      rows.push([name, value === undefined ? '' : String(value)]);
    }
  }
  return rows;
}

/**
 * The last `last` runs of `bench` in `records` as a text table: a header of commit (12 digits,
 * `+` when the tree had changes), date and load average, then one row per figure any of the runs
 * has (in the order they first appear), blank where a run lacks it.
 */
export function compareTable(records: readonly BenchRecord[], bench: string, last = 5): string {
  const runs = records.filter((r) => r.bench === bench).slice(-last);
  if (runs.length === 0) {
    const known = [...new Set(records.map((r) => r.bench))].sort();
    return `no recorded runs of '${bench}'${known.length > 0 ? ` (recorded: ${known.join(', ')})` : ''}`;
  }
  const columns = runs.map((r) => new Map(flatten(r.figures)));
  const names: string[] = [];
  for (const c of columns) for (const name of c.keys()) if (!names.includes(name)) names.push(name);
  const header: string[][] = [
    ['commit', ...runs.map((r) => `${r.commit.slice(0, 12)}${r.dirty ? '+' : ''}`)],
    ['date', ...runs.map((r) => r.date.slice(0, 16).replace('T', ' '))],
    ['load average', ...runs.map((r) => (r.loadAverage ?? []).join(' '))],
  ];
  const rows = [...header, ...names.map((name) => [name, ...columns.map((c) => c.get(name) ?? '')])];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length))) ?? [];
  const line = (row: readonly string[]): string =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [...header.map(line), '-'.repeat(line(header[0] ?? []).length), ...rows.slice(3).map(line)].join(
    '\n',
  );
}

function main(argv: readonly string[]): void {
  const bench = argv.find((a, i) => !a.startsWith('--') && !['--last', '--file'].includes(argv[i - 1] ?? ''));
  const option = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv[i + 1];
  };
  const last = Number(option('--last') ?? 5);
  const file = option('--file') ?? RESULTS_FILE;
  if (bench === undefined || !Number.isSafeInteger(last) || last < 1) {
    console.error('usage: npm run bench:compare <bench> [--last N] [--file results.jsonl]');
    process.exit(2);
  }
  if (!existsSync(file)) {
    console.error(`no ${file} yet: run a benchmark with BENCH_RECORD=1 to record it`);
    process.exit(1);
  }
  console.log(compareTable(parseResults(readFileSync(file, 'utf8')), bench, last));
}

if (import.meta.main) main(process.argv.slice(2));
