/**
 * @module restore-counters — a sandbox restore's one change to the saved state (docs/sandbox.md):
 * every id counter of the snapshot (`nextUserId`, `nextOrderId`, `nextTradeId`, a withdrawal's,
 * a loan's, …: any numeric field named `next…Id`, at any depth) keeps counting from the current
 * state, so an id is never given twice — the history store keeps every order and trade ever made,
 * and a bot may still hold ids from before the restore.
 */
const COUNTER = /^next[A-Za-z]*Id$/;

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `saved` with each id counter raised to the current state's where that is higher (a copy). */
export function carryCounters<T extends object>(saved: T, current: object): T {
  const walk = (s: Plain, c: Plain): Plain => {
    const out: Plain = { ...s };
    for (const [key, value] of Object.entries(s)) {
      const now = c[key];
      if (COUNTER.test(key) && typeof value === 'number' && typeof now === 'number')
        out[key] = Math.max(value, now);
      else if (isPlain(value) && isPlain(now)) out[key] = walk(value, now);
    }
    return out;
  };
  return walk(saved as Plain, current as Plain) as T;
}

/** The state without its journal position and id counters (each set to 0): what a restore gives back exactly. */
export function withoutCounters(state: object): Plain {
  const walk = (s: Plain): Plain => {
    const out: Plain = {};
    for (const [key, value] of Object.entries(s)) {
      if (key === 'lastSeq' || (COUNTER.test(key) && typeof value === 'number')) out[key] = 0;
      else out[key] = isPlain(value) ? walk(value) : value;
    }
    return out;
  };
  return walk(state as Plain);
}
