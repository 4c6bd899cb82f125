/**
 * @module prom — reads the Prometheus text format (version 0.0.4, what `/metrics` serves) into
 * samples: `name{label="value",…} value [timestamp]` lines; `# HELP` and `# TYPE` lines are read
 * for the type, other comments skipped. Label values may hold escaped `\\`, `\"` and `\n`;
 * values may be NaN and ±Inf in any letter case.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Metrics {
  /** Every sample, in order. */
  readonly samples: readonly Sample[];
  /** Family name → type (`counter`, `gauge`, `histogram`, `summary`, `untyped`). */
  readonly types: ReadonlyMap<string, string>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

/** Parses the text; a line that is not a sample is skipped. */
export function parseMetrics(text: string): Metrics {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const type = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(line);
      if (type !== null) types.set(type[1] as string, type[2] as string);
      continue;
    }
    const sample = parseSample(line);
    if (sample !== undefined) samples.push(sample);
  }
  return { samples, types };
}

function parseSample(line: string): Sample | undefined {
  const name = NAME.exec(line)?.[0];
  if (name === undefined) return undefined;
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      while (line[i] === ' ' || line[i] === ',') i++;
      if (line[i] === '}') {
        i++;
        break;
      }
      const label = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i))?.[0];
      if (label === undefined) return undefined;
      i += label.length;
      while (line[i] === ' ') i++;
      if (line[i] !== '=') return undefined;
      i++;
      while (line[i] === ' ') i++;
      if (line[i] !== '"') return undefined;
      i++;
      let value = '';
      for (;;) {
        const c = line[i];
        if (c === undefined) return undefined;
        i++;
        if (c === '"') break;
        if (c === '\\') {
          const next = line[i++];
          value += next === 'n' ? '\n' : (next ?? '');
        } else value += c;
      }
      labels[label] = value;
    }
  }
  const rest = line.slice(i).trim().split(/\s+/);
  const text = rest[0] ?? '';
  // As Go's ParseFloat reads them (prom-client writes `Nan`): NaN and Inf in any letter case.
  const special = /^([+-]?)(inf|nan)$/i.exec(text);
  const value =
    special === null
      ? Number(text)
      : (special[2] as string).toLowerCase() === 'nan'
        ? NaN
        : special[1] === '-'
          ? -Infinity
          : Infinity;
  if (text === '' || (Number.isNaN(value) && special === null)) return undefined;
  return { name, labels, value };
}

/** The sum of every sample named `name` whose labels include `where`; undefined when there is none. */
export function sum(metrics: Metrics, name: string, where: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const s of metrics.samples) {
    if (s.name !== name) continue;
    if (!Object.entries(where).every(([k, v]) => s.labels[k] === v)) continue;
    total = (total ?? 0) + s.value;
  }
  return total;
}

/** A histogram's mean over its life (`_sum / _count`); undefined before its first observation. */
export function mean(metrics: Metrics, histogram: string): number | undefined {
  const count = sum(metrics, `${histogram}_count`);
  const total = sum(metrics, `${histogram}_sum`);
  return count === undefined || total === undefined || count === 0 ? undefined : total / count;
}
