/**
 * @module clock-speed — the speeds a sandbox's speed clock (`--clock=speed:<n>`,
 * `bourse clock speed <n>`) accepts, read the same way by the options and the admin API; and the
 * clock modes `--clock` names (a leaf: the options, the sequencer and the admin API import it).
 */

export const CLOCK_MODES = ['real', 'manual', 'speed'] as const;
export type ClockMode = (typeof CLOCK_MODES)[number];
/** `--clock`'s value: a mode, with its speed for `speed:<n>` (parseSpeed). */
export type ClockSetting = 'real' | 'manual' | `speed:${string}`;

/** The mode of a `--clock` value. */
export const clockMode = (setting: ClockSetting): ClockMode =>
  setting.startsWith('speed:') ? 'speed' : (setting as ClockMode);

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
