/** @module sandbox-admin — what the admin API's sandbox routes are given besides the clock: the longest advance, and the save points on a sandbox. */
import type { SavePointSetup } from '../api/admin/save-point-routes.ts';
import type { VenueConfig } from '../domain/specs.ts';
import { MAX_CLOCK_ADVANCE_MS } from '../sequencer/manual-clock.ts';
import { SavePoints } from './save-points.ts';

/** The settings of src/api/admin/sandbox-routes.ts and save-point-routes.ts; `saves` only on a sandbox (`--sandbox`). */
export function sandboxAdmin(
  sandbox: boolean,
  dataDir: string,
  genesis: VenueConfig,
): { maxAdvanceMs: number; saves: SavePointSetup | undefined } {
  return {
    maxAdvanceMs: MAX_CLOCK_ADVANCE_MS,
    saves: sandbox ? { points: new SavePoints(dataDir), genesis } : undefined,
  };
}
