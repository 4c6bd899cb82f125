/**
 * @module clock-speed — the speeds a sandbox's speed clock (`--clock=speed:<n>`,
 * `bourse clock speed <n>`) accepts, read the same way by the options and the admin API.
 */

/** The fastest speed accepted: a year in about half a minute. */
export const MAX_CLOCK_SPEED = 1_000_000;
/** The slowest: a thousandth of real time. */
export const MIN_CLOCK_SPEED = 0.001;
/**
 * `1000`, `2.5`, `0.5` → the speed; undefined for anything else: a sign, an exponent, more than 3
 * decimals, 0, or a value outside MIN_CLOCK_SPEED..MAX_CLOCK_SPEED.
 */
export function parseSpeed(text: string): number | undefined {
  if (!/^\d{1,7}(\.\d{1,3})?$/.test(text)) return undefined;
  const speed = Number(text);
  return speed >= MIN_CLOCK_SPEED && speed <= MAX_CLOCK_SPEED ? speed : undefined;
}
