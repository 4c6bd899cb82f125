/**
 * @module replay-routes — the operator's replay API on a running sandbox (under the admin token,
 * used by `bourse replay`, `bourse replay start <files>` and `bourse replay stop <id>`): the
 * replays the journal holds and how far each got, a new replay of files on the server's disk, and
 * a replay ended for good. docs/sandbox.md, "Replay".
 */
import { quoted } from '../edge/refusal.ts';
import type { ReplayControl } from '../../replay/run-replay.ts';
import { param, type ApiReply, type Route } from '../http/types.ts';
import { fail, ok } from './admin-reply.ts';

export interface ReplayAdminDeps {
  /** The sandbox's replays; absent on a venue that is not a sandbox. */
  readonly replays: ReplayControl | undefined;
}

/** The replay path that only reads. */
export const REPLAY_READ_PATHS: readonly string[] = ['/admin/replay'];

export function replayAdminRoutes(deps: ReplayAdminDeps): Route[] {
  const replays = (): ReplayControl =>
    deps.replays ??
    fail(
      'INVALID_STATE',
      'only a sandbox replays history: start the venue with --sandbox (BOURSE_SANDBOX=true)',
    );
  return [
    { path: '/admin/replay', handler: () => ok({ replays: replays().status() }) },
    {
      path: '/admin/replay/start',
      handler: async (request): Promise<ApiReply> => {
        const control = replays();
        const files = (param(request, 'files') ?? '')
          .split(',')
          .map((f) => f.trim())
          .filter((f) => f !== '');
        if (files.length === 0)
          fail(
            'INVALID_PARAMETER',
            'no files given: name one or more files on the server, <file> or <market>=<file>',
          );
        try {
          return ok({ replay: await control.start(files) });
        } catch (error) {
          // The loaders' refusal (its line and column), an unknown market, or the engine's refusal: nothing journaled.
          return fail('INVALID_PARAMETER', (error as Error).message);
        }
      },
    },
    {
      path: '/admin/replay/stop',
      handler: async (request): Promise<ApiReply> => {
        const control = replays();
        const text = param(request, 'replay') ?? '';
        const replayId = /^\d{1,15}$/.test(text) ? Number(text) : undefined;
        if (replayId === undefined)
          fail('INVALID_PARAMETER', `${quoted(text)} is not a replay id (bourse replay lists them)`);
        try {
          return ok({ replay: await control.end(replayId) });
        } catch (error) {
          return fail('INVALID_STATE', (error as Error).message);
        }
      },
    },
  ];
}
