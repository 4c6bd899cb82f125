/**
 * @module proc-cpu — CPU time of processes from /proc (Linux), for benchmarks that report what
 * each process of a deployment costs: user + system time of every thread of a process
 * (`/proc/<pid>/stat` fields 14 and 15, in clock ticks), and the PostgreSQL backends serving
 * one database (found by their process title, `postgres: [<cluster>: ]<user> <database> …`).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc counts CPU time in 1/100 s on every architecture Node runs on. */
const TICK_MICROS = 10_000;

/** CPU time `pid` has used (µs, all its threads), or 0 once it has exited. */
export function cpuMicros(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MICROS;
}

/** The pids of the PostgreSQL backends connected to `database` now. */
export function postgresBackends(database: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const title = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      // `postgres: [<cluster>: ]<user> <database> <host>(<port>) <state>`, NUL-padded.
      if (title.startsWith('postgres: ') && title.replaceAll('\0', ' ').split(' ').includes(database)) {
        pids.push(Number(name));
      }
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

/** CPU time of named groups of processes; `delta` is each group's use since `start`. */
export class CpuMeter {
  readonly #groups: Record<string, () => readonly number[]>;
  #start = new Map<number, number>();

  /** `groups`: each name's pids, read at every start and stop (backends come and go). */
  constructor(groups: Record<string, () => readonly number[]>) {
    this.#groups = groups;
  }

  start(): void {
    this.#start = new Map();
    for (const pids of Object.values(this.#groups))
      for (const pid of pids()) this.#start.set(pid, cpuMicros(pid));
  }

  /** µs used by each group since `start` (a process that appeared meanwhile counts from 0). */
  delta(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, pids] of Object.entries(this.#groups)) {
      out[name] = pids().reduce(
        (sum, pid) => sum + Math.max(0, cpuMicros(pid) - (this.#start.get(pid) ?? 0)),
        0,
      );
    }
    return out;
  }
}
