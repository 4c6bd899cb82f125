/** @module pipeline — what every signed `/api/<method>` request goes through: IP limit, authentication, key limit, the handler, and the turning of refusals and faults into error replies. */
import type { Command } from '../../../domain/commands.ts';
import { RESULTS, type ResultName } from '../../../domain/result-codes.ts';
import type { ApiKeyRecord, ApplyResult } from '../../../engine/engine.ts';
import type { VenueState } from '../../../sequencer/venue-ports.ts';
import { PERMISSION_FLAGS, type Authenticator, type Permission } from '../../auth/authenticate.ts';
import type { RateLimiter } from '../../auth/rate-limit.ts';
import type { SecretSealer } from '../../auth/secret-sealing.ts';
import { logRefusal } from '../../../observability/refusal-levels.ts';
import type { Log } from '../../../domain/log.ts';
import { SequencerStoppedError } from '../../../sequencer/sequencer.ts';
import { readArgs, type Args, type Params, type TextOf } from '../../edge/endpoint.ts';
import { Refusal } from '../../edge/refusal.ts';
import { errorReply } from '../reply.ts';
import { paramText, type ApiReply, type ApiRequest, type Route, type VenuePort } from '../types.ts';

/** More parameters than any endpoint takes plus clients' extras; beyond it the request is refused unread. */
export const MAX_SIGNED_PARAMS = 64;
/** How often the history checkpoint is polled while waiting for it to catch up (ms). */
const HISTORY_POLL_MS = 5;

/**
 * What a signed handler gets besides its `args`: the authenticated key and the venue. No request:
 * a handler reads only its declared parameters, so the same declaration can be served over
 * another transport (the WebSocket's request channels, issue 33).
 */
export interface SignedContext {
  readonly key: ApiKeyRecord;
  readonly userId: number;
  readonly venue: VenuePort;
  readonly engine: VenueState;
  /** Longest wait for the history store to reach the engine's state before a history read (ms). */
  readonly historyWaitMs: number;
  /** Seals the secrets of keys an endpoint issues (createSubUserKey), as the operator's are. */
  readonly sealer: SecretSealer;
}

/**
 * One signed endpoint, declared once: its method name (the path is `/api/<method>`), the
 * permission its key needs, its parameters with their readers (edge/readers.ts; read in this
 * order, before the handler runs) and its handler, which gets their values as `args`.
 * docs/adding-an-endpoint.md shows one.
 */
export interface SignedEndpoint<P extends Params = Params> {
  readonly method: string;
  readonly permission: Permission;
  readonly params: P;
  handler(ctx: SignedContext, args: Args<P>): ApiReply | Promise<ApiReply>;
  /**
   * Also served over the WebSocket as a request channel (zb-api-facts §10.9; src/api/ws/requests.ts):
   * the method in lower case, after the market without its underscore when `currency` is a
   * market (`btcusdt_order`), after the coin when it is a coin (`usdt_withdraw`), alone otherwise
   * (`getaccountinfo`). The same permission, limits, parameters and handler as `/api/<method>`.
   */
  readonly webSocket?: true;
}

/** A signed endpoint's declaration, its `args` typed from its `params`. */
export function signedEndpoint<P extends Params>(endpoint: SignedEndpoint<P>): SignedEndpoint {
  return endpoint as unknown as SignedEndpoint;
}

export interface PipelineServices {
  readonly venue: VenuePort;
  readonly authenticator: Authenticator;
  readonly limiter: RateLimiter;
  readonly historyWaitMs: number;
  readonly sealer: SecretSealer;
  /** Unexpected failures (error) and refusals at their levels (observability/refusal-levels.ts). */
  readonly log: Log;
}

/**
 * The route for `endpoint`. Order: per-IP limit (every request, before any work, so signature
 * guessing is throttled too), parameter count, authentication, then `serveAuthenticated` (the
 * per-key limit, only after the signature holds, so nobody can spend another key's budget; the
 * parameters; the handler). A Refusal becomes its error reply, logged at its result's level; any
 * other exception is logged and answered 1002, never a 500.
 */
export function signedRoute(endpoint: SignedEndpoint, services: PipelineServices): Route {
  const { authenticator, limiter, log } = services;
  const requirement = { method: endpoint.method, permission: endpoint.permission };
  return {
    path: `/api/${endpoint.method}`,
    handler: async (request) => {
      const method = endpoint.method;
      try {
        const byIp = await limiter.hitIp(request.ip);
        if (!byIp.allowed) return refuse(log, method, request, 'RATE_LIMITED', byIp.message);
        if (request.params.length > MAX_SIGNED_PARAMS) {
          const message = `too many parameters (at most ${MAX_SIGNED_PARAMS})`;
          return refuse(log, method, request, 'INVALID_PARAMETER', message);
        }
        const auth = authenticator.authenticate(request, requirement);
        if (!auth.ok) return refuse(log, method, request, auth.result, auth.message);
        return await serveAuthenticated(endpoint, services, auth.key, request, paramText);
      } catch (error) {
        if (error instanceof Refusal) return refuse(log, method, request, error.result, error.message);
        return faultReply(log, method, error);
      }
    },
  };
}

/** What serving an authenticated request needs, whatever its transport. */
export type ServingServices = Omit<PipelineServices, 'authenticator'>;

/**
 * An authenticated request to `endpoint`, for every transport (the HTTP route above, the
 * WebSocket's request channels): the key's rate limit, the declared parameters read from
 * `source`, the handler. Throws the Refusal of the first check that fails.
 */
export async function serveAuthenticated<S>(
  endpoint: SignedEndpoint,
  services: ServingServices,
  key: ApiKeyRecord,
  source: S,
  textOf: TextOf<S>,
): Promise<ApiReply> {
  const byKey = await services.limiter.hitKey(key.accessKey);
  if (!byKey.allowed) throw new Refusal('RATE_LIMITED', byKey.message);
  const { venue } = services;
  const args = readArgs(endpoint.params, venue.engine, source, textOf);
  const context: SignedContext = {
    key,
    userId: key.userId,
    venue,
    engine: venue.engine,
    historyWaitMs: services.historyWaitMs,
    sealer: services.sealer,
  };
  return await endpoint.handler(context, args);
}

/**
 * The reply to a failure that is not a Refusal: a stopped venue NOT_ACCEPTED (logged once where
 * it stops, so here at debug only), anything else logged as an error and answered 1002.
 */
export function faultReply(log: Log, method: string, error: unknown): ApiReply {
  if (error instanceof SequencerStoppedError) {
    log.debug({ method }, `${method}: ${error.message}`);
    return errorReply('NOT_ACCEPTED', RESULTS.NOT_ACCEPTED.message);
  }
  log.error({ method, err: error }, `signed ${method}: unexpected failure`);
  return errorReply('INTERNAL_ERROR', `internal error while serving ${method}`);
}

/**
 * A second permission a request needs beyond its endpoint's (a margin order needs entrustPerm and
 * leverPerm): PERMISSION_DENIED, worded as the authenticator words the first.
 */
export function requirePermission(ctx: SignedContext, permission: Permission, what: string): void {
  if (!ctx.key.permissions[permission]) {
    throw new Refusal(
      'PERMISSION_DENIED',
      `this API key lacks ${PERMISSION_FLAGS[permission]}, which ${what} needs`,
    );
  }
}

/** A refusal's reply, logged at its result's level with the access key the request named. */
function refuse(
  log: Log,
  method: string,
  request: ApiRequest,
  result: ResultName,
  message: string,
): ApiReply {
  logRefusal(
    log,
    result,
    () => ({ method, ip: request.ip, accessKey: claimedKey(request) }),
    `refused ${method}: ${message}`,
  );
  return errorReply(result, message);
}

/** The access key a request named (cut short: it may be anything). */
function claimedKey(request: ApiRequest): string | undefined {
  for (const p of request.params) if (p.name === 'accesskey') return p.value.slice(0, 64);
  return undefined;
}

/**
 * Submits a command and waits until it is durable and applied. A refusal by the engine (or BUSY
 * from the sequencer) is thrown as a Refusal carrying the engine's message.
 */
export async function submitOrRefuse(ctx: SignedContext, command: Command): Promise<ApplyResult> {
  const result = await ctx.venue.submit(command);
  if (result.result !== 'OK')
    throw new Refusal(result.result, result.message ?? RESULTS[result.result].message);
  return result;
}

/**
 * Waits (at most `historyWaitMs`) until the history store has applied everything the engine had
 * applied when this request was served, so that a client reads its own acknowledged writes. The
 * store is a projection fed after the engine; on timeout the read goes ahead with what is there.
 */
export async function awaitHistory(ctx: SignedContext): Promise<void> {
  const target = ctx.engine.lastSeq;
  // A monotonic clock: the venue's wall clock may be stepped, or fixed in tests.
  const deadline = performance.now() + ctx.historyWaitMs;
  while ((await ctx.venue.history.checkpoint()) < target) {
    if (performance.now() >= deadline) return;
    await new Promise((resolve) => setTimeout(resolve, HISTORY_POLL_MS));
  }
}
