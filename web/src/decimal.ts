/**
 * @module decimal — exact decimal text arithmetic for the order form (totals and fee estimates):
 * values are bigint units at a scale, parsed from and formatted to text, never through a float.
 */

/** `units` × 10^-`scale`. */
export interface Dec {
  readonly units: bigint;
  readonly scale: number;
}

const DECIMAL = /^(\d{1,30})(?:\.(\d{1,30}))?$/;

/** A non-negative decimal (`12`, `0.5`, `3.140`), or undefined for anything else. */
export function parseDec(text: string): Dec | undefined {
  const m = DECIMAL.exec(text.trim());
  if (m === null) return undefined;
  const fraction = m[2] ?? '';
  return { units: BigInt(`${m[1]}${fraction}`), scale: fraction.length };
}

/** Decimals of a text as typed (`0.120` → 3). */
export function decimalsOf(text: string): number {
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}

export function mul(a: Dec, b: Dec): Dec {
  return { units: a.units * b.units, scale: a.scale + b.scale };
}

/** `a` at `scale` decimals, rounded down (or up). */
export function rescale(a: Dec, scale: number, up = false): Dec {
  if (scale >= a.scale) return { units: a.units * 10n ** BigInt(scale - a.scale), scale };
  const factor = 10n ** BigInt(a.scale - scale);
  const q = a.units / factor;
  return { units: up && q * factor !== a.units ? q + 1n : q, scale };
}

/** a / b at `scale` decimals, rounded down; undefined when b is 0. */
export function div(a: Dec, b: Dec, scale: number): Dec | undefined {
  if (b.units === 0n) return undefined;
  // a/b = (a.units / b.units) × 10^(b.scale − a.scale); shift so the quotient has `scale` decimals.
  const shift = scale + b.scale - a.scale;
  const num = shift >= 0 ? a.units * 10n ** BigInt(shift) : a.units;
  const den = shift >= 0 ? b.units : b.units * 10n ** BigInt(-shift);
  return { units: num / den, scale };
}

export function isZero(a: Dec): boolean {
  return a.units === 0n;
}

/** Text with exactly `a.scale` decimals (`scale` given: rounded down to it first). */
export function format(a: Dec, scale?: number): string {
  const d = scale === undefined ? a : rescale(a, scale);
  const digits = d.units.toString().padStart(d.scale + 1, '0');
  return d.scale === 0 ? digits : `${digits.slice(0, -d.scale)}.${digits.slice(-d.scale)}`;
}
