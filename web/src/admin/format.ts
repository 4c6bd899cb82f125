/** @module format — how the console shows the admin API's values (no DOM: tested under Node). */

/** A time in ms as `YYYY-MM-DD HH:MM:SS` (UTC), or a dash. */
export function time(ms: unknown): string {
  const n = Number(ms);
  if (ms === null || ms === undefined || !Number.isFinite(n) || n <= 0) return '–';
  return new Date(n).toISOString().slice(0, 19).replace('T', ' ');
}

/** A value, or a dash for null and undefined. */
export const text = (value: unknown): string =>
  value === null || value === undefined || value === '' ? '–' : String(value);

/** A decimal fraction as a percentage: "0.002" → "0.2%" (exact: the decimal point moves). */
export function percent(fraction: string): string {
  const negative = fraction.startsWith('-');
  const [whole = '0', decimals = ''] = fraction.replace('-', '').split('.');
  const digits = `${whole}${decimals.padEnd(2, '0')}`;
  const point = whole.length + 2;
  const units = digits.slice(0, point).replace(/^0+(?=\d)/, '');
  const rest = digits.slice(point).replace(/0+$/, '');
  return `${negative ? '-' : ''}${units}${rest === '' ? '' : `.${rest}`}%`;
}
