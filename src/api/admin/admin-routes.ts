/**
 * @module admin-routes — the operator's HTTP API (used by the `bourse` CLI): users, API keys,
 * operator deposits, snapshots and market status, and the funds routes of funds-routes.ts. Served
 * on the admin listener only (admin-server.ts). Every call but `/admin/instance` needs the admin
 * token that the server writes into its data directory (`Authorization: Bearer <token>`).
 */
import { randomUUID } from 'node:crypto';
import { RESULTS } from '../../domain/result-codes.ts';
import {
  KEY_PERMISSION_HELP,
  PERMISSION_NAMES,
  permissionNames,
  type KeyPermissions,
} from '../../domain/commands.ts';
import { formatUnitsTrim, parseDecimal } from '../../domain/money.ts';
import type { Log } from '../../domain/log.ts';
import {
  param,
  paramText,
  type ApiReply,
  type Route,
  type RouteHandler,
  type VenuePort,
} from '../http/types.ts';
import { readCoin } from '../edge/readers.ts';
import { quoted } from '../edge/refusal.ts';
import { answering, fail, fromResult, ok, userOf } from './admin-reply.ts';
import { ACTIVITY_READ_PATHS, activityRoutes } from './activity-routes.ts';
import { OPERATOR_READ_PATHS, operatorRoutes, SESSION_PATHS } from './operator-routes.ts';
import {
  MemoryOperatorStore,
  OperatorAccess,
  roleAllows,
  roleNeeded,
  type OperatorStore,
} from './operators.ts';
import { CHANGE_READ_PATHS, changeRoutes, type KeyRenewer } from './change-routes.ts';
import { auditParams, collectCommands, noteCommand, type AuditCommand, type AuditLog } from './audit-log.ts';
import { lendingAdminRoutes } from './lending-routes.ts';
import { fundsAdminRoutes, type FundsAdminDeps } from './funds-routes.ts';
import { REPLAY_READ_PATHS, replayAdminRoutes, type ReplayAdminDeps } from './replay-routes.ts';
import { sandboxAdminRoutes, type SandboxAdminDeps } from './sandbox-routes.ts';
import { savePointRoutes } from './save-point-routes.ts';
import { reportRoutes } from './report-routes.ts';
import { VIEW_READ_PATHS, viewsRoutes, type ViewsDeps } from './views-routes.ts';
import { RISK_READ_PATHS, riskAdminRoutes } from './risk-routes.ts';
import { knownMarketParam, unknownMarketMessage } from './views-routes.ts';

/**
 * Creates API key material: the secret is shown once; only its sealed hash is kept. Without
 * `renew` and `opens`, keys cannot be rotated or reissued.
 */
export interface KeyIssuer extends Partial<KeyRenewer> {
  issue(): { accessKey: string; secretKey: string; sealedSecret: string };
}

export interface AdminDeps {
  readonly venue: VenuePort;
  /** The bootstrap token (the data directory's admin.token): the host's own admin (operators.ts). */
  readonly token: string;
  /** The named operators (absent: none but the bootstrap token's, in memory). */
  readonly operators?: OperatorStore;
  /** This start's id (listen.json's `instance`), answered without the token at `/admin/instance`. */
  readonly instance: string;
  readonly keys: KeyIssuer;
  /** Takes a snapshot now; resolves with its path. */
  readonly snapshot: () => Promise<string | undefined>;
  /** Addresses, fund passwords, withdrawals and the simulated chain. */
  readonly funds: Omit<FundsAdminDeps, 'venue'>;
  /** The demo and the clock (default: the wall clock, which cannot be advanced). */
  readonly sandbox?: Omit<SandboxAdminDeps, 'venue'>;
  /** A sandbox's replays of history (absent: not a sandbox). */
  readonly replays?: ReplayAdminDeps['replays'];
  /** The operator's views: users, solvency, markets, the venue, rate-limit locks. */
  readonly views?: Omit<ViewsDeps, 'venue' | 'audit' | 'log'>;
  /** Where every admin action is recorded (absent: nowhere). */
  readonly audit?: AuditLog;
  /**
   * The admin component's log, for what an action wants said beyond the listener's access line
   * (which already records every admin request at info: path, parameters, answer code, time).
   */
  readonly log?: Log;
}

const WALL_CLOCK: Omit<SandboxAdminDeps, 'venue'> = {
  clock: { mode: 'real', now: Date.now, advance: () => Promise.reject(new Error('the wall clock')) },
  maxAdvanceMs: 0,
};

/**
 * The admin paths that only read: every other one is an action, recorded in the audit log (a
 * route added later is recorded unless it is named here).
 */
export const READ_ONLY_PATHS: ReadonlySet<string> = new Set([
  '/admin/instance',
  '/admin/state',
  '/admin/withdrawals/list',
  '/admin/withdrawals/show',
  '/admin/demo/status',
  '/admin/clock',
  ...REPLAY_READ_PATHS,
  '/admin/sandbox/saves',
  '/admin/report',
  ...VIEW_READ_PATHS,
  ...CHANGE_READ_PATHS,
  ...RISK_READ_PATHS,
  ...ACTIVITY_READ_PATHS,
  ...OPERATOR_READ_PATHS,
  ...SESSION_PATHS,
]);

/** The paths answered without a sign-in: the instance check, and signing in and out. */
const OPEN_PATHS: ReadonlySet<string> = new Set(['/admin/instance', ...SESSION_PATHS]);

/**
 * Parses `asset,entrust,…` into the flags; undefined on an unknown name. `subUser` is set only
 * when named, so the keys of operators who never name it are recorded as before.
 */
export function parsePermissions(text: string): KeyPermissions | undefined {
  const names = text === '' ? [] : text.split(',').map((s) => s.trim());
  if (!names.every((n) => Object.hasOwn(PERMISSION_NAMES, n))) return undefined;
  return {
    asset: names.includes('asset'),
    entrust: names.includes('entrust'),
    money: names.includes('money'),
    lever: names.includes('lever'),
    ...(names.includes('subuser') && { subUser: true }),
  };
}

function renewer(keys: KeyIssuer): KeyRenewer | undefined {
  const { renew, opens } = keys;
  return renew === undefined || opens === undefined ? undefined : { renew, opens };
}

export function adminRoutes(deps: AdminDeps): Route[] {
  const access = new OperatorAccess({
    bootstrapToken: deps.token,
    store: deps.operators ?? new MemoryOperatorStore(),
  });
  // Every command an action submits is noted for its audit entry.
  const venue: VenuePort = {
    engine: deps.venue.engine,
    history: deps.venue.history,
    now: () => deps.venue.now(),
    submit: async (command) => {
      const r = await deps.venue.submit(command);
      noteCommand({ type: command.type, result: r.result });
      // The operator who mistyped a market is told which there are (the engine names only the one).
      if (r.result === 'UNKNOWN_MARKET' && 'market' in command) {
        const market = command.market;
        const name = typeof market === 'object' && market !== null ? market.name : market;
        return { ...r, message: unknownMarketMessage(name, deps.venue.engine.markets()) };
      }
      return r;
    },
  };
  const audited = (path: string, handler: RouteHandler): RouteHandler => {
    const audit = deps.audit;
    if (audit === undefined || READ_ONLY_PATHS.has(path)) return handler;
    return async (request) => {
      // A call without a sign-in is no action: the listener's access log has it.
      const who = access.who(request);
      if (who === undefined) return handler(request);
      const started = Date.now();
      const id = audit.begin({
        time: started,
        action: path.replace(/^\/admin\//, ''),
        operator: who.name,
        params: auditParams(request.params),
        seqBefore: venue.engine.lastSeq,
      });
      let reply: ApiReply | undefined;
      let commands: AuditCommand[] = [];
      try {
        ({ value: reply, commands } = await collectCommands(async () => handler(request)));
        return reply;
      } finally {
        const body = reply !== undefined && 'json' in reply ? (reply.json as Record<string, unknown>) : {};
        audit.end(id, {
          code: reply === undefined ? 1001 : typeof body.code === 'number' ? body.code : 1001,
          message: reply === undefined ? 'failed: the server log says why' : String(body.message ?? ''),
          commands,
          seqAfter: venue.engine.lastSeq,
          ms: Date.now() - started,
        });
      }
    };
  };
  /** The call of an operator whose role allows it; 401 without a sign-in, 403 beyond the role. */
  const guarded =
    (path: string, handler: RouteHandler): RouteHandler =>
    (request) => {
      const who = access.who(request);
      if (who === undefined) {
        return {
          status: 401,
          json: {
            code: RESULTS.AUTH_FAILED.code,
            message:
              "admin token required: 'Authorization: Bearer <token>', a session from /admin/session/open " +
              "or the token in the data directory's admin.token",
          },
        };
      }
      const needed = roleNeeded(path, READ_ONLY_PATHS);
      if (!roleAllows(who.role, needed)) {
        return {
          status: 403,
          json: {
            code: RESULTS.PERMISSION_DENIED.code,
            message: `${who.name} (${who.role}) may not ${path.replace(/^\/admin\//, '')}: it needs the ${needed} role`,
          },
        };
      }
      return handler(request);
    };

  const routes: Route[] = [
    {
      // Unguarded and harmless: lets the CLI check that the server at a listen.json address is
      // the one that wrote the file before it sends the token there.
      path: '/admin/instance',
      handler: () => ok({ instance: deps.instance }),
    },
    {
      path: '/admin/users/create',
      handler: async (request) => {
        const name = param(request, 'name') ?? '';
        const r = await venue.submit({ type: 'RegisterUser', name, uniqueIgnoringCase: true });
        return fromResult(r, { userId: r.userId });
      },
    },
    {
      path: '/admin/keys/create',
      handler: async (request) => {
        const userId = userOf(venue, request);
        const perms = param(request, 'perms') ?? '';
        // A key's permissions are chosen, never defaulted: a key with none would be useless, one
        // with all would grant withdrawals nobody asked for.
        if (perms === '') {
          fail('INVALID_PARAMETER', `perms is required: a comma list of ${KEY_PERMISSION_HELP}`);
        }
        const permissions = parsePermissions(perms);
        if (permissions === undefined) {
          fail(
            'INVALID_PARAMETER',
            `perms ${quoted(perms)} must be a comma list of ${Object.keys(PERMISSION_NAMES).join(', ')}`,
          );
        }
        const ips = request.params.filter((p) => p.name === 'ip').map((p) => p.value);
        const strict = param(request, 'replayProtection') ?? 'false';
        if (strict !== 'true' && strict !== 'false') {
          fail('INVALID_PARAMETER', 'replayProtection must be true or false');
        }
        const { accessKey, secretKey, sealedSecret } = deps.keys.issue();
        const r = await venue.submit({
          type: 'CreateApiKey',
          userId,
          accessKey,
          sealedSecret,
          permissions,
          ips,
          ...(strict === 'true' && { replayProtection: true }),
        });
        const granted = permissionNames(permissions);
        return fromResult(
          r,
          r.result === 'OK'
            ? { accessKey, secretKey, permissions: granted, ips, replayProtection: strict === 'true' }
            : {},
        );
      },
    },
    {
      path: '/admin/deposits/credit',
      handler: async (request) => {
        const userId = userOf(venue, request);
        const coin = readCoin(venue.engine, 'coin', paramText(request, 'coin'));
        const amountText = param(request, 'amount') ?? '';
        const amount = parseDecimal(amountText, coin.unitDecimal);
        if (amount === undefined || amount <= 0) {
          fail(
            'INVALID_AMOUNT',
            `amount ${quoted(amountText)} must be a positive decimal with at most ${coin.unitDecimal} decimals, ` +
              `at most ${formatUnitsTrim(Number.MAX_SAFE_INTEGER, coin.unitDecimal)} ${coin.name}`,
          );
        }
        const ref = param(request, 'ref') ?? randomUUID();
        const depositId = `operator:${ref}`;
        const r = await venue.submit({
          type: 'CreditDeposit',
          depositId,
          userId,
          coin: coin.name,
          amount,
          remark: 'operator credit',
        });
        const balance = venue.engine.balance(userId, coin.name);
        return fromResult(r, { depositId, duplicate: r.duplicate === true, available: balance?.available });
      },
    },
    {
      path: '/admin/markets/status',
      handler: async (request) => {
        const status = param(request, 'status');
        if (status !== 'trading' && status !== 'halted')
          fail('INVALID_PARAMETER', "status must be 'trading' or 'halted'");
        const r = await venue.submit({
          type: 'SetMarketStatus',
          market: knownMarketParam(venue.engine, request).name,
          status,
        });
        return fromResult(r);
      },
    },
    {
      path: '/admin/snapshot',
      handler: async () => {
        const path = await deps.snapshot();
        return path === undefined
          ? fail('GENERAL_ERROR', 'snapshot failed: the server log says why')
          : ok({ path });
      },
    },
    {
      path: '/admin/state',
      handler: () => ok({ lastSeq: venue.engine.lastSeq, stateHash: venue.engine.stateHash() }),
    },
    ...fundsAdminRoutes({ ...deps.funds, venue }),
    ...lendingAdminRoutes({ venue }),
    ...riskAdminRoutes({ venue }),
    ...sandboxAdminRoutes({ ...(deps.sandbox ?? WALL_CLOCK), venue }),
    ...replayAdminRoutes({ replays: deps.replays }),
    ...savePointRoutes({ venue, saves: deps.sandbox?.saves, replays: deps.replays }),
    ...reportRoutes({ venue }),
    ...viewsRoutes({ ...deps.views, venue, audit: deps.audit, log: deps.log }),
    ...changeRoutes({ venue, keys: renewer(deps.keys) }),
    ...activityRoutes({ venue }),
    ...operatorRoutes(access),
  ];
  return routes.map((r) => ({
    path: r.path,
    handler: audited(r.path, answering(OPEN_PATHS.has(r.path) ? r.handler : guarded(r.path, r.handler))),
  }));
}
