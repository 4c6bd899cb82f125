/**
 * @module main — the composition root: the one module that wires every part together.
 */
import { DEFAULT_VENUE } from './config/default-venue.ts';
import { Engine } from './engine/engine.ts';

const engine = new Engine(DEFAULT_VENUE);
console.log(
  `bourse: engine ready with ${engine.markets().length} markets (${engine
    .markets()
    .map((m) => m.name)
    .join(', ')})`,
);
