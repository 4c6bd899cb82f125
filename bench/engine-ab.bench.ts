/**
 * @module engine-ab.bench — this checkout's engine against a baseline's (another git revision),
 * interleaved in one process on the same pre-generated stream (bench/engine-stream.ts).
 *
 *     node --expose-gc bench/engine-ab.bench.ts [--baseline main] [--pairs 5] [--commands 1000000] [--margin] [--users n] [--pool this|baseline|both]
 *     valgrind --tool=callgrind node --expose-gc bench/engine-ab.bench.ts --only this --commands 100000
 *
 * The baseline's source is extracted with `git archive` into a temporary directory and its
 * `src/engine/engine.ts` imported beside this checkout's. Each pair times both engines, the order
 * alternating from pair to pair (AB, BA, …), each on a fresh engine with the stream's setup
 * applied untimed and a forced GC before timing. This checkout's engine must reach the stream's
 * state hash and event count; the baseline must reach its own warm-up run's (the two may differ
 * where this checkout changed the snapshot, e.g. the risk side's marks on the margin stream: the
 * report says whether they were equal).
 * Reported: medians of commands per CPU-second of this thread (steadier than wall time on a
 * shared machine) and per wall-second, and the ratio this/baseline. Last line: JSON.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { DEFAULT_VENUE } from '../src/config/default-venue.ts';
import type { SequencedCommand } from '../src/domain/commands.ts';
import type { VenueConfig } from '../src/domain/specs.ts';
import { Engine } from '../src/engine/engine.ts';
import { DEFAULT_STREAM, generateStream, type GeneratedStream } from './engine-stream.ts';
import { finish, QUICK, sized } from './results.ts';

/** The engine surface the bench uses, which every revision has. */
interface AnyEngine {
  apply(cmd: SequencedCommand): { result: string; events: readonly unknown[] };
  stateHash(): string;
  /** Since issue 34's event pool (src/engine/event-pool.ts); absent in older engines. */
  readonly eventPool?: { enable(): void; recycle(): void };
}
type EngineClass = new (config: VenueConfig) => AnyEngine;

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
/** `--quick` (CI's smoke run): this checkout against its own HEAD, one pair of 20,000 commands. */
const BASELINE = arg('baseline', sized('main', 'HEAD'));
const PAIRS = Number(arg('pairs', sized('5', '1')));
const COMMANDS = Number(arg('commands', sized(String(DEFAULT_STREAM.commands), '20000')));
/**
 * `--only baseline|this|none`: generate the stream, then run one engine once (or none), for an
 * instruction count under `valgrind --tool=callgrind` (bench/README.md): count(x) − count(none)
 * is engine x's cost on the stream, with setup.
 */
const ONLY = arg('only', '');
/**
 * `--margin`: the margin stream of `npm run bench:engine` (5,000 users, 10,000 open margin
 * accounts, a third of the orders on margin with express and auto-repay, interest ticks every
 * 100,000 commands) instead of the spot one.
 */
const MARGIN = process.argv.includes('--margin');
/**
 * `--pool this|baseline|both`: those engines reuse their hot events (issue 34's event pool),
 * recycled after every command as the sequencer recycles after every batch; default none (fresh
 * events). `--baseline HEAD --pool this` times one tree with the pool off against it on.
 */
const POOL = arg('pool', 'none');
if (!['none', 'this', 'baseline', 'both'].includes(POOL))
  throw new Error('--pool takes none, this, baseline or both');
/** `--users n`: the stream's traders (default: the spot stream's 500, the margin stream's 5,000). */
const USERS = Number(arg('users', MARGIN ? '5000' : String(DEFAULT_STREAM.users)));

const runGc = (): void => {
  if (typeof gc !== 'function') throw new Error('run with --expose-gc');
  gc();
  gc();
};

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** Extracts the baseline revision's tree (git archive) and returns its directory. */
function extractBaseline(rev: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bourse-ab-'));
  const tar = execFileSync('git', ['archive', '--format=tar', rev, 'src'], { maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  // The engine imports no package, but keep resolution the same as in the checkout.
  symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

interface Run {
  readonly cpuMs: number;
  readonly wallMs: number;
}

interface Expected {
  events: number | undefined;
  hash: string | undefined;
}

function timeRun(Ctor: EngineClass, stream: GeneratedStream, expected: Expected, label: string): Run {
  const engine = new Ctor(DEFAULT_VENUE);
  const pooled = POOL === label || POOL === 'both';
  const pool = pooled ? engine.eventPool : undefined;
  if (pooled && pool === undefined)
    throw new Error(`${label}: --pool ${POOL}, but this engine has no event pool`);
  pool?.enable();
  for (const cmd of stream.setup) {
    const r = engine.apply(cmd);
    if (r.result !== 'OK') throw new Error(`${label}: setup command ${cmd.seq} refused: ${r.result}`);
    pool?.recycle();
  }
  runGc();
  const commands = stream.commands;
  const cpu0 = process.threadCpuUsage();
  const t0 = performance.now();
  let events = 0;
  for (let i = 0; i < commands.length; i++) {
    events += engine.apply(commands[i] as SequencedCommand).events.length;
    pool?.recycle();
  }
  const wallMs = performance.now() - t0;
  const cpu = process.threadCpuUsage(cpu0);
  expected.events ??= events;
  if (events !== expected.events) throw new Error(`${label}: ${events} events, expected ${expected.events}`);
  const hash = engine.stateHash();
  expected.hash ??= hash;
  if (hash !== expected.hash) throw new Error(`${label}: state hash ${hash}, expected ${expected.hash}`);
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs };
}

async function main(): Promise<void> {
  const dir = extractBaseline(BASELINE);
  try {
    const baseline = (await import(pathToFileURL(path.join(dir, 'src/engine/engine.ts')).href)) as {
      Engine: EngineClass;
    };
    const stream = generateStream({
      ...DEFAULT_STREAM,
      commands: COMMANDS,
      users: USERS,
      ...(MARGIN ? { margin: { share: 1 / 3, interestEvery: 100_000, autoRepay: true } } : {}),
    });
    const expected: Record<string, Expected> = {
      this: { events: stream.summary.events, hash: stream.summary.stateHash as string },
      baseline: { events: undefined, hash: undefined },
    };
    const engines: [string, EngineClass][] = [
      ['baseline', baseline.Engine],
      ['this', Engine as unknown as EngineClass],
    ];
    if (ONLY !== '') {
      const chosen = engines.find(([label]) => label === ONLY);
      if (chosen === undefined && ONLY !== 'none') throw new Error('--only takes baseline, this or none');
      if (chosen !== undefined) timeRun(chosen[1], stream, expected[chosen[0]] as Expected, chosen[0]);
      console.log(JSON.stringify({ only: ONLY, baseline: BASELINE, commands: COMMANDS }));
      return;
    }
    // Warm-up: one untimed-for-the-report run of each.
    for (const [label, Ctor] of engines) timeRun(Ctor, stream, expected[label] as Expected, label);
    const sameState = expected['baseline']?.hash === expected['this']?.hash;
    console.log(`baseline and this reach the same state hash: ${sameState ? 'yes' : 'no'}`);
    const runs: Record<string, Run[]> = { baseline: [], this: [] };
    for (let p = 0; p < PAIRS; p++) {
      const order = p % 2 === 0 ? engines : [...engines].reverse();
      for (const [label, Ctor] of order) {
        const r = timeRun(Ctor, stream, expected[label] as Expected, label);
        (runs[label] as Run[]).push(r);
        console.log(
          `pair ${p + 1} ${label.padEnd(8)} ${Math.round((COMMANDS / r.cpuMs) * 1000).toLocaleString('en')} cmd/CPU-s, ${Math.round((COMMANDS / r.wallMs) * 1000).toLocaleString('en')} cmd/s wall`,
        );
      }
    }
    const rate = (rs: readonly Run[], key: keyof Run): number =>
      median(rs.map((r) => (COMMANDS / r[key]) * 1000));
    const base = runs['baseline'] as Run[];
    const mine = runs['this'] as Run[];
    const pairRatios = mine.map((r, i) => (base[i] as Run).cpuMs / r.cpuMs);
    const result = {
      baseline: BASELINE,
      commands: COMMANDS,
      pairs: PAIRS,
      pool: POOL,
      load: os.loadavg().map((x) => Number(x.toFixed(2))),
      baselineCmdPerCpuS: Math.round(rate(base, 'cpuMs')),
      thisCmdPerCpuS: Math.round(rate(mine, 'cpuMs')),
      ratioCpu: Number((rate(mine, 'cpuMs') / rate(base, 'cpuMs')).toFixed(4)),
      medianPairRatioCpu: Number(median(pairRatios).toFixed(4)),
      baselineCmdPerWallS: Math.round(rate(base, 'wallMs')),
      thisCmdPerWallS: Math.round(rate(mine, 'wallMs')),
      ratioWall: Number((rate(mine, 'wallMs') / rate(base, 'wallMs')).toFixed(4)),
      sameState,
    };
    console.log(
      `medians: baseline ${result.baselineCmdPerCpuS.toLocaleString('en')}, this ${result.thisCmdPerCpuS.toLocaleString('en')} cmd/CPU-s; ratio ${result.ratioCpu} (median of pair ratios ${result.medianPairRatioCpu}); wall ratio ${result.ratioWall}`,
    );
    finish('engine-ab', { bench: 'engine-ab', quick: QUICK, ...result });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
