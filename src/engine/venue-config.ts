/** @module venue-config — a fresh engine's coins and markets loaded from its configuration, each checked first. */
import { validateCoinFunds } from '../domain/chains.ts';
import { validateCoin, validateMarket, type VenueConfig } from '../domain/specs.ts';
import type { Registry } from './registry.ts';

/** Adds the configuration's coins and markets to an empty registry. Throws on an invalid or duplicate one. */
export function loadVenueConfig(registry: Registry, config: VenueConfig): void {
  for (const coin of config.coins) {
    const problems = validateCoin(coin);
    if (problems.length > 0 || registry.coin(coin.name) !== undefined) {
      throw new Error(`invalid coin ${coin.name}: ${problems.join('; ') || 'duplicate'}`);
    }
    registry.addCoin(coin);
  }
  for (const market of config.markets) {
    const problems = validateMarket(market, registry.coinSpecs());
    if (problems.length > 0 || registry.market(market.name) !== undefined) {
      throw new Error(`invalid market ${market.name}: ${problems.join('; ') || 'duplicate'}`);
    }
    registry.addMarket(market);
  }
  for (const f of config.funds ?? []) {
    const problems = validateCoinFunds(f, registry.coinSpecs());
    if (problems.length > 0 || (config.funds ?? []).filter((g) => g.coin === f.coin).length > 1) {
      throw new Error(`invalid funds of ${f.coin}: ${problems.join('; ') || 'duplicate'}`);
    }
  }
}
