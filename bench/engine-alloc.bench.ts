/**
 * @module engine-alloc.bench — the engine's cost per command in measures that do not move with the
 * machine's load (issue 34): **bytes allocated** (V8's own heap accounting) and, with
 * `--instructions`, **instructions** (valgrind's callgrind), on the seeded stream of
 * bench/engine-stream.ts.
 *
 *     npm run bench:engine-alloc [-- --baseline main] [--commands 200000] [--margin] [--instructions [--warm-passes 1]]
 *
 * Each engine (this checkout's; with `--baseline rev` also that revision's, extracted with
 * `git archive` as engine-ab does) is measured in a child process of its own, started with
 * `--single-threaded` (no concurrent compilation: the JIT tiers up at the same points in every
 * run, so the counts repeat) and a young generation fixed at `SEMI_SPACE_MB`:
 * - **bytes**: the stream is run once to warm the JIT, then on a fresh engine in windows of
 *   `WINDOW` commands: a forced GC, the heap's used size, the window, the used size again. No GC
 *   may run inside a window (checked with a `gc` PerformanceObserver; the run fails if one did),
 *   so the growth is exactly what the window allocated: garbage and what it keeps alike.
 * - **instructions**: two runs under `valgrind --tool=callgrind` of the child, one that applies the
 *   stream twice (warm-up and a measured pass) and one that applies it once; the difference is one
 *   warm pass over the stream, setup excluded.
 * `--profile` adds where this checkout's engine allocates most (the sampling heap profiler, objects
 * collected since included), for choosing the next step.
 * The state hash of each engine's run must be the stream's (a baseline's is reported beside it).
 * A baseline's instructions are not comparable with this checkout's: the stream's generator runs
 * this checkout's engine (bench/engine-stream.ts), which warms this code and not the baseline's
 * copy (with the pool off, 128ce69 counted 28,013 a command as a baseline where this checkout,
 * whose pool-off path differs only in the events' makers, counted 12,678 as `this`). To compare two
 * trees, run each one's bench in its own checkout.
 * Last line: JSON.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session, type HeapProfiler } from 'node:inspector/promises';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { DEFAULT_VENUE } from '../src/config/default-venue.ts';
import type { SequencedCommand } from '../src/domain/commands.ts';
import type { VenueConfig } from '../src/domain/specs.ts';
import { DEFAULT_STREAM, generateStream, type GeneratedStream } from './engine-stream.ts';
import { finish, QUICK, sized } from './results.ts';

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

const BASELINE = arg('baseline', '');
const COMMANDS = Number(arg('commands', sized('200000', '20000')));
const MARGIN = process.argv.includes('--margin');
const INSTRUCTIONS = process.argv.includes('--instructions');
/**
 * `--warm-passes n` (default 1): the instructions counted are those of pass n + 1, after n warm
 * passes (a child applying the stream n + 1 times minus one applying it n times). Pass 2 still
 * pays for the JIT's last compiles of the engine's largest functions; with 2, that is done, and a
 * scavenge may fall inside the counted pass (it is then counted: the cost of what was allocated).
 */
const WARM_PASSES = Number(arg('warm-passes', '1'));
/** `--profile`: also where this checkout's engine allocates (V8's sampling heap profiler, collected objects included). */
const PROFILE = process.argv.includes('--profile');
/**
 * `--fresh-events`: leave the engine's event pool off (every event a fresh object, as the tests see
 * it). Without it an engine that has the pool runs it as the sequencer does, recycled after each
 * command (the sequencer recycles after each batch, once every reader is done with it).
 */
const FRESH_EVENTS = process.argv.includes('--fresh-events');
/** Commands per measured window; each window must fit the young generation. */
const WINDOW = 10_000;
/** The young generation's semi-space, MB: a window allocates well under it. */
const SEMI_SPACE_MB = 256;
const CHILD_FLAGS = [
  '--expose-gc',
  '--single-threaded',
  `--max-semi-space-size=${SEMI_SPACE_MB}`,
  `--min-semi-space-size=${SEMI_SPACE_MB}`,
];

const streamOf = (): GeneratedStream =>
  generateStream({
    ...DEFAULT_STREAM,
    commands: COMMANDS,
    users: MARGIN ? 5000 : DEFAULT_STREAM.users,
    ...(MARGIN ? { margin: { share: 1 / 3, interestEvery: 100_000, autoRepay: true } } : {}),
  });

const runGc = (): void => {
  if (typeof gc !== 'function') throw new Error('run with --expose-gc');
  gc();
  gc();
};

/** The heap's used bytes over every space. */
const heapUsed = (): number => v8.getHeapStatistics().used_heap_size;

/** Lets the `gc` PerformanceObserver's entries arrive (they come a couple of turns later). */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 1));
}

/** A fresh engine with the stream's setup applied. */
function freshEngine(Ctor: EngineClass, stream: GeneratedStream): AnyEngine {
  const engine = new Ctor(DEFAULT_VENUE);
  const pool = FRESH_EVENTS ? undefined : engine.eventPool;
  pool?.enable();
  for (const cmd of stream.setup) {
    const r = engine.apply(cmd);
    if (r.result !== 'OK') throw new Error(`setup command ${cmd.seq} refused: ${r.result}`);
    // Recycled as the sequencer does after each batch: else the pool grows to every setup event.
    pool?.recycle();
  }
  return engine;
}

function applyAll(
  engine: AnyEngine,
  commands: readonly SequencedCommand[],
  from = 0,
  to = commands.length,
): number {
  let events = 0;
  const pool = FRESH_EVENTS ? undefined : engine.eventPool;
  for (let i = from; i < to; i++) {
    events += engine.apply(commands[i] as SequencedCommand).events.length;
    pool?.recycle();
  }
  return events;
}

/** The functions that allocate most, bytes per command (sampled), with their caller. */
function topAllocators(head: HeapProfiler.SamplingHeapProfileNode, commands: number): string[] {
  const bytes = new Map<string, number>();
  const walk = (node: HeapProfiler.SamplingHeapProfileNode, caller: string): void => {
    const f = node.callFrame;
    const name = `${f.functionName === '' ? '(anonymous)' : f.functionName} ${path.basename(f.url)}:${f.lineNumber + 1}`;
    if (node.selfSize > 0) {
      const key = `${name} ← ${caller}`;
      bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
    }
    for (const c of node.children) walk(c, name);
  };
  walk(head, '');
  return [...bytes]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .map(([k, v]) => `${(v / commands).toFixed(1).padStart(7)} B  ${k}`);
}

/** What a child reports for one engine. */
interface ChildReport {
  readonly bytesPerCommand?: number;
  readonly windows?: number;
  readonly profile?: readonly string[];
  readonly events: number;
  readonly stateHash: string;
  readonly streamHash: string | undefined;
}

/** `--child dir bytes|passes n`: measures the engine of `dir/src/engine/engine.ts`. */
async function child(dir: string, mode: string, passes: number): Promise<void> {
  const { Engine } = (await import(pathToFileURL(path.join(dir, 'src/engine/engine.ts')).href)) as {
    Engine: EngineClass;
  };
  const stream = streamOf();
  let engine = freshEngine(Engine, stream);
  let events = applyAll(engine, stream.commands);
  const report: Record<string, unknown> = {};
  if (mode === 'bytes') {
    let gcs = 0;
    const observer = new PerformanceObserver((list) => {
      gcs += list.getEntries().length;
    });
    observer.observe({ entryTypes: ['gc'] });
    engine = freshEngine(Engine, stream);
    let bytes = 0;
    let windows = 0;
    events = 0;
    for (let at = 0; at < stream.commands.length; at += WINDOW) {
      runGc();
      await settle();
      gcs = 0;
      const before = heapUsed();
      events += applyAll(engine, stream.commands, at, Math.min(at + WINDOW, stream.commands.length));
      bytes += heapUsed() - before;
      await settle();
      if (gcs !== 0)
        throw new Error(`a GC ran inside window ${windows}: raise SEMI_SPACE_MB or lower WINDOW`);
      windows++;
    }
    observer.disconnect();
    report['bytesPerCommand'] = Number((bytes / stream.commands.length).toFixed(1));
    report['windows'] = windows;
  } else if (mode === 'profile') {
    engine = freshEngine(Engine, stream);
    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    events = applyAll(engine, stream.commands);
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    report['profile'] = topAllocators(profile.head, stream.commands.length);
  } else {
    for (let p = 1; p < passes; p++) {
      engine = freshEngine(Engine, stream);
      events = applyAll(engine, stream.commands);
    }
  }
  console.log(
    JSON.stringify({
      ...report,
      events,
      stateHash: engine.stateHash(),
      streamHash: stream.summary.stateHash,
    } satisfies ChildReport),
  );
}

function runChild(
  prefix: readonly string[],
  dir: string,
  mode: string,
  passes: number,
): { report: ChildReport; stderr: string } {
  const args = [
    ...CHILD_FLAGS,
    import.meta.filename,
    ...process.argv.slice(2),
    '--child',
    dir,
    mode,
    String(passes),
  ];
  const [cmd, ...rest] = [...prefix, process.execPath, ...args] as [string, ...string[]];
  const r = spawnSync(cmd, rest, { encoding: 'utf8', maxBuffer: 1 << 26, killSignal: 'SIGKILL' });
  if (r.status !== 0) throw new Error(`${cmd} ${mode} exited with ${r.status ?? r.signal}:\n${r.stderr}`);
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  return { report: JSON.parse(last) as ChildReport, stderr: r.stderr };
}

/** Instructions callgrind counted over the child's whole run. */
function instructionsOf(dir: string, passes: number): number {
  const out = path.join(os.tmpdir(), `bourse-callgrind-${process.pid}-${passes}.out`);
  try {
    const { stderr } = runChild(
      ['valgrind', '--tool=callgrind', `--callgrind-out-file=${out}`],
      dir,
      'passes',
      passes,
    );
    const m = /Collected : (\d+)/.exec(stderr);
    if (m === null) throw new Error(`no "Collected" line in callgrind's output:\n${stderr}`);
    return Number(m[1]);
  } finally {
    rmSync(out, { force: true });
  }
}

interface Figures {
  readonly bytesPerCommand: number;
  readonly instructionsPerCommand: number | undefined;
  readonly sameStateAsStream: boolean;
}

function measure(label: string, dir: string): Figures {
  const { report } = runChild([], dir, 'bytes', 1);
  const sameStateAsStream = report.stateHash === report.streamHash;
  if (label === 'this' && !sameStateAsStream)
    throw new Error(`this engine's state hash ${report.stateHash} is not the stream's ${report.streamHash}`);
  const instructionsPerCommand = INSTRUCTIONS
    ? Math.round((instructionsOf(dir, WARM_PASSES + 1) - instructionsOf(dir, WARM_PASSES)) / COMMANDS)
    : undefined;
  console.log(
    `${label.padEnd(8)} ${String(report.bytesPerCommand).padStart(6)} bytes/command${instructionsPerCommand === undefined ? '' : `, ${instructionsPerCommand.toLocaleString('en')} instructions/command in pass ${WARM_PASSES + 1}`} (${COMMANDS.toLocaleString('en')} commands, ${report.windows} windows; state as the stream's: ${sameStateAsStream ? 'yes' : 'no'})`,
  );
  if (PROFILE && label === 'this') {
    const { report: prof } = runChild([], dir, 'profile', 1);
    console.log(`where this engine allocates, per command (sampled):\n${(prof.profile ?? []).join('\n')}`);
  }
  return { bytesPerCommand: report.bytesPerCommand as number, instructionsPerCommand, sameStateAsStream };
}

function extract(rev: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bourse-alloc-'));
  const tar = execFileSync('git', ['archive', '--format=tar', rev, 'src'], { maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--child');
  if (at >= 0) {
    await child(process.argv[at + 1] as string, process.argv[at + 2] as string, Number(process.argv[at + 3]));
    return;
  }
  const here = path.resolve(import.meta.dirname, '..');
  const mine = measure('this', here);
  let base: Figures | undefined;
  if (BASELINE !== '') {
    const dir = extract(BASELINE);
    try {
      base = measure('baseline', dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  finish('engine-alloc', {
    bench: 'engine-alloc',
    quick: QUICK,
    commands: COMMANDS,
    margin: MARGIN,
    ...(INSTRUCTIONS ? { warmPasses: WARM_PASSES } : {}),
    this: mine,
    ...(base === undefined ? {} : { baseline: BASELINE, base }),
  });
}

await main();
