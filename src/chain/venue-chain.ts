/**
 * @module venue-chain — the chains a venue's coins move on: the simulated chain (its state in the
 * data directory) carrying every coin the engine knows, genesis and runtime changes alike, and the
 * watcher that reports what it does to the engine (a coin added at run time is carried and watched
 * from then on).
 */
import type { Command } from '../domain/commands.ts';
import type { Log } from '../domain/log.ts';
import type { ApplyResult } from '../engine/engine.ts';
import type { VenueState } from '../sequencer/venue-ports.ts';
import { ChainWatcher } from './chain-watcher.ts';
import { SimulatedChain } from './simulated-chain.ts';

/** Opens the simulated chain at `dir` and its watcher on `engine` (not started). */
export function openVenueChain(
  engine: VenueState,
  dir: string,
  submit: (command: Command) => Promise<ApplyResult>,
  log: Log,
): { readonly chain: SimulatedChain; readonly watcher: ChainWatcher } {
  const chain = SimulatedChain.open(engine.funds.config(), dir, (message) => log.warn(message));
  const watcher = new ChainWatcher({
    engine,
    submit,
    adapters: chain.adapters(),
    carry: (funds) => chain.carry(funds),
    log: (message) => log.warn(message),
  });
  return { chain, watcher };
}
