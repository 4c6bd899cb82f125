/**
 * @module did-you-mean — the nearest of a few known words to a mistyped one (a flag, a command),
 * for refusals that say what the person probably meant: `unknown option --prot (did you mean
 * --port?)`.
 */

/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between two short words. */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const up = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + same);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, (rows[i - 2] as number[])[j - 2] as number);
      row[j] = d;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

/**
 * The candidate nearest to `word` when it is near enough to be a typo (at most a third of its
 * letters wrong, and at least one right), or one that `word` begins; undefined otherwise.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = candidate.startsWith(word) && word.length >= 3 ? 0.5 : distance(word, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  const bare = word.replace(/^-+/, '');
  return bestDistance <= Math.max(1, Math.floor(bare.length / 3)) ? best : undefined;
}

/** ` (did you mean X?)` for the nearest candidate, or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const near = nearest(word, candidates);
  return near === undefined ? '' : ` (did you mean ${near}?)`;
}
