/**
 * @module save-points — a sandbox's named save points (`bourse sandbox save|restore`, docs/sandbox.md):
 * the engine's whole state as a snapshot in `<data>/sandbox/<name>.json`, with the hash a restore
 * gives back, and the RestoreSandbox command that brings one back.
 *
 * The hash of a save point is the state hash (src/engine/engine.ts) of the state without its journal
 * position and id counters: a restore gives back exactly that state, while the journal goes on and
 * ids keep counting (src/engine/restore-counters.ts).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../config/data-dir.ts';
import type { RestoreSandbox } from '../domain/commands.ts';
import { Engine } from '../engine/engine.ts';
import { withoutCounters } from '../engine/restore-counters.ts';
import type { EngineSnapshot } from '../engine/snapshot.ts';

/** A save point's name: a letter or digit, then up to 63 letters, digits, `-`, `_` or `.`. */
export const SAVE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The folder of the data directory that holds the save points. */
export const SAVE_DIR = 'sandbox';
/**
 * The largest state a restore journals (bytes of JSON): within a journal record's 16 MiB
 * (src/journal/file-journal.ts), with room for the command around it.
 */
export const MAX_RESTORE_STATE_BYTES = 15 * 1024 * 1024;

/** The hash a save point is known by, and a restore gives back (the module comment). */
export function savePointHash(state: EngineSnapshot): string {
  return createHash('sha256')
    .update(JSON.stringify(withoutCounters(state)))
    .digest('hex');
}

/** A save point as stored. */
export interface SavePoint {
  readonly name: string;
  /** The venue time (ms) of the last command the state includes. */
  readonly savedAt: number;
  readonly seq: number;
  readonly stateHash: string;
  readonly state: EngineSnapshot;
}

/** Why a save or a restore was refused (nothing changed): the name, or the file. */
export class SavePointError extends Error {
  /** `name`: a bad or unknown name; `file`: a damaged file. */
  readonly kind: 'name' | 'file';

  constructor(message: string, kind: 'name' | 'file') {
    super(message);
    this.name = 'SavePointError';
    this.kind = kind;
  }
}

const badName = (name: string): string =>
  `'${name.slice(0, 70)}' is not a save point name: 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit`;

/** The save points of one data directory. */
export class SavePoints {
  readonly #dir: string;

  constructor(dataDir: string) {
    this.#dir = join(dataDir, SAVE_DIR);
  }

  /** Writes `state` as save point `name` (replacing one of that name). Throws a SavePointError on a bad name. */
  save(name: string, state: EngineSnapshot, savedAt: number): SavePoint {
    if (!SAVE_NAME.test(name)) throw new SavePointError(badName(name), 'name');
    const point: SavePoint = { name, savedAt, seq: state.lastSeq, stateHash: savePointHash(state), state };
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    writeAtomic(join(this.#dir, `${name}.json`), JSON.stringify(point), 0o600);
    return point;
  }

  /** Save point `name`, its hash checked. Throws a SavePointError: a bad or unknown name, a damaged file. */
  load(name: string): SavePoint {
    if (!SAVE_NAME.test(name)) throw new SavePointError(badName(name), 'name');
    const path = join(this.#dir, `${name}.json`);
    if (!existsSync(path)) {
      const known = this.list().map((p) => p.name);
      throw new SavePointError(
        `no save point '${name}'${known.length === 0 ? ': none saved yet (bourse sandbox save <name>)' : `: the saved ones are ${known.join(', ')}`}`,
        'name',
      );
    }
    let point: SavePoint;
    try {
      point = JSON.parse(readFileSync(path, 'utf8')) as SavePoint;
    } catch (error) {
      throw new SavePointError(
        `save point '${name}' (${path}) does not parse: ${(error as Error).message}`,
        'file',
      );
    }
    if (
      typeof point !== 'object' ||
      point === null ||
      typeof point.state !== 'object' ||
      point.state === null
    )
      throw new SavePointError(`save point '${name}' (${path}) holds no state`, 'file');
    const hash = savePointHash(point.state);
    if (hash !== point.stateHash)
      throw new SavePointError(
        `save point '${name}' (${path}) is damaged: its state hashes to ${hash}, not the recorded ${String(point.stateHash)}`,
        'file',
      );
    try {
      Engine.restore(point.state);
    } catch (error) {
      throw new SavePointError(
        `save point '${name}' (${path}) does not load: ${(error as Error).message}`,
        'file',
      );
    }
    return point;
  }

  /** The save points, by name: name, time, seq and hash (the states are not read into the list). */
  list(): Omit<SavePoint, 'state'>[] {
    if (!existsSync(this.#dir)) return [];
    return readdirSync(this.#dir)
      .filter((f) => f.endsWith('.json') && SAVE_NAME.test(f.slice(0, -5)))
      .sort()
      .flatMap((f) => {
        try {
          const { name, savedAt, seq, stateHash } = JSON.parse(
            readFileSync(join(this.#dir, f), 'utf8'),
          ) as SavePoint;
          return [{ name, savedAt, seq, stateHash }];
        } catch {
          return [];
        }
      });
  }
}

/** The command that restores `state` (a save point's, or a fresh venue's), or a problem when it is too large to journal. */
export function restoreCommand(name: string, state: EngineSnapshot): RestoreSandbox | string {
  const bytes = Buffer.byteLength(JSON.stringify(state));
  if (bytes > MAX_RESTORE_STATE_BYTES)
    return `the state of '${name}' is ${bytes} bytes of JSON, more than a restore journals (${MAX_RESTORE_STATE_BYTES})`;
  return { type: 'RestoreSandbox', name, state: state as unknown as Record<string, unknown> };
}
