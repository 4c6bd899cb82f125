/**
 * @module save-point-routes — a sandbox's save points under the admin token (`bourse sandbox save|
 * restore|reset|saves`, docs/sandbox.md): save the state as it is now, restore a save point, reset
 * to a fresh demo venue, list the save points. A venue that is not a sandbox refuses them all.
 */
import type { VenueConfig } from '../../domain/specs.ts';
import { freshVenueState } from '../../sandbox/fresh-venue.ts';
import { restoreCommand, savePointHash, SavePointError, type SavePoints } from '../../sandbox/save-points.ts';
import type { EngineSnapshot } from '../../engine/snapshot.ts';
import type { ReplayControl } from '../../replay/run-replay.ts';
import { param, type ApiReply, type Route, type VenuePort } from '../http/types.ts';
import { fail, fromResult, ok } from './admin-reply.ts';

/** What the save points need, on a sandbox (`--sandbox`) only. */
export interface SavePointSetup {
  readonly points: SavePoints;
  /** The venue's genesis configuration: what a reset starts from. */
  readonly genesis: VenueConfig;
}

export interface SavePointDeps {
  readonly venue: VenuePort;
  /** Undefined on a venue that is not a sandbox: every route refuses. */
  readonly saves: SavePointSetup | undefined;
  /** The sandbox's replays: paused around a restore or reset, then resumed as the state says. */
  readonly replays?: Pick<ReplayControl, 'aroundRestore'> | undefined;
}

const NOT_A_SANDBOX =
  'only a sandbox saves, restores and resets its state: this venue was not started with --sandbox (BOURSE_SANDBOX=true)';

/** The routes (unguarded: admin-routes.ts puts them behind the admin token). */
export function savePointRoutes(deps: SavePointDeps): Route[] {
  const { venue } = deps;
  const setup = (): SavePointSetup => deps.saves ?? fail('INVALID_STATE', NOT_A_SANDBOX);
  const attempt = <T>(action: () => T): T => {
    try {
      return action();
    } catch (error) {
      if (error instanceof SavePointError) fail('INVALID_PARAMETER', error.message);
      throw error;
    }
  };
  /** Journals the RestoreSandbox of `state`; the reply has the hash the venue is at afterwards. */
  const restore = async (
    name: string,
    state: EngineSnapshot,
    data: Record<string, unknown>,
  ): Promise<ApiReply> => {
    const command = restoreCommand(name, state);
    if (typeof command === 'string') fail('INVALID_STATE', command);
    const run = async (): Promise<ApiReply> => {
      const r = await venue.submit(command);
      if (r.result !== 'OK') return fromResult(r);
      const now = venue.engine.snapshot();
      return ok({ ...data, seq: now.lastSeq, stateHash: savePointHash(now) });
    };
    return deps.replays === undefined ? run() : deps.replays.aroundRestore(run);
  };
  return [
    {
      path: '/admin/sandbox/save',
      handler: (request) => {
        const { points } = setup();
        const state = venue.engine.snapshot();
        const point = attempt(() => points.save(param(request, 'name') ?? '', state, venue.now()));
        return ok({ name: point.name, seq: point.seq, savedAt: point.savedAt, stateHash: point.stateHash });
      },
    },
    {
      path: '/admin/sandbox/restore',
      handler: async (request) => {
        const { points } = setup();
        const point = attempt(() => points.load(param(request, 'name') ?? ''));
        return restore(point.name, point.state, {
          name: point.name,
          saved: point.stateHash,
          savedSeq: point.seq,
        });
      },
    },
    {
      path: '/admin/sandbox/reset',
      handler: async () => {
        const { genesis } = setup();
        const state = freshVenueState(genesis, venue.engine, venue.now());
        return restore('@reset', state, { name: '@reset', users: venue.engine.demo.demoUsers().length });
      },
    },
    {
      path: '/admin/sandbox/saves',
      handler: () => ok({ saves: setup().points.list() }),
    },
  ];
}
