/** @module random — the one seeded pseudo-random generator of the project (tests, benchmarks, the demo market's price path): pure, so the same seed gives the same stream everywhere. */

/**
 * A small fast seeded PRNG (mulberry32) of 32-bit unsigned integers: the same seed gives the same
 * stream on every machine, so a failing run can be repeated.
 */
export function seededUint32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** The same generator as numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  const next = seededUint32(seed);
  return () => next() / 4_294_967_296;
}
