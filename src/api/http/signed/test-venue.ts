/** @module test-venue — test support for the signed API: a real Engine and SQLite history store behind a VenuePort that applies each command at once, plus signed-request building as ccxt does it. */
import { randomBytes } from 'node:crypto';
import { DEFAULT_VENUE } from '../../../config/default-venue.ts';
import type { Command, KeyPermissions } from '../../../domain/commands.ts';
import type { VenueConfig } from '../../../domain/specs.ts';
import { Engine, type ApplyResult } from '../../../engine/engine.ts';
import { memoryLog } from '../../../observability/memory-log.ts';
import type { HistoryStore } from '../../../store/history-store.ts';
import { SqliteHistoryStore } from '../../../store/sqlite-history-store.ts';
import { MemoryRateLimiter } from '../../auth/rate-limit.ts';
import { createSecretSealer, generateApiCredentials, type SecretSealer } from '../../auth/secret-sealing.ts';
import { hmacMd5Hex, rawSignedString, decodedSignedString, secretHash } from '../../auth/signature.ts';
import type { ApiRequest, ApiReply, RequestParam, Route, VenuePort } from '../types.ts';
import { creditCommand } from '../../../../test/fixtures/engine-driver.ts';
import { signedRoutes, type SignedRoutesDeps } from './index.ts';

export const T0 = 1_700_000_000_000;
export const ALL_PERMISSIONS: KeyPermissions = { asset: true, entrust: true, money: true, lever: true };

/** A VenuePort over a real engine: submit stamps seq and time, applies, and feeds history before resolving. */
export class TestVenue implements VenuePort {
  readonly engine: Engine;
  /** The venue's wall clock (ms); tests move it. */
  time = T0;
  /** Commands submitted (accepted or refused by the engine). */
  submitted = 0;
  /** When false, submit resolves before history has the command (as a real projection lags). */
  awaitHistory = true;
  #seq = 0;
  #deposits = 0;
  #historyFeed: Promise<unknown> = Promise.resolve();

  constructor(config: VenueConfig = DEFAULT_VENUE) {
    this.engine = new Engine(config);
  }

  /** History in the real SQLite adapter, on an in-memory database. */
  readonly history: HistoryStore = SqliteHistoryStore.open(':memory:');

  now(): number {
    return this.time;
  }

  async submit(command: Command): Promise<ApplyResult> {
    this.submitted++;
    const seq = ++this.#seq;
    const time = this.time;
    const result = this.engine.apply({ ...command, seq, time });
    const feed = this.#historyFeed.then(() =>
      this.history.applyBatch([{ seq, time, events: result.events }]),
    );
    this.#historyFeed = feed;
    if (this.awaitHistory) await feed;
    return result;
  }

  async must(command: Command): Promise<ApplyResult> {
    const r = await this.submit(command);
    if (r.result !== 'OK') throw new Error(`${command.type} refused: ${r.result} ${r.message ?? ''}`);
    return r;
  }

  async user(name: string): Promise<number> {
    return this.engine.userId(name) ?? ((await this.must({ type: 'RegisterUser', name })).userId as number);
  }

  async fund(name: string, coin: string, amount: string): Promise<number> {
    const userId = await this.user(name);
    await this.must(creditCommand(this.engine, userId, coin, amount, `d${++this.#deposits}`));
    return userId;
  }
}

export interface Credentials {
  readonly accessKey: string;
  readonly secret: string;
}

/** The venue, its signed routes and a sealer, with helpers to make keys and call endpoints. */
export class SignedApiHarness {
  readonly venue: TestVenue;
  readonly sealer: SecretSealer = createSecretSealer(randomBytes(32));
  readonly limiter: MemoryRateLimiter;
  readonly routes: Map<string, Route>;
  /** Everything the routes logged, every level. */
  readonly logs = memoryLog();

  /** `config`: the venue (the default one unless a test needs another, e.g. its mark rule). */
  constructor(
    deps: Partial<Pick<SignedRoutesDeps, 'reqTimeWindowMs' | 'historyWaitMs'>> = {},
    config: VenueConfig = DEFAULT_VENUE,
  ) {
    this.venue = new TestVenue(config);
    this.limiter = new MemoryRateLimiter({ clock: () => this.venue.time });
    const routes = signedRoutes({
      venue: this.venue,
      sealer: this.sealer,
      rateLimiter: this.limiter,
      log: this.logs.log,
      ...deps,
    });
    this.routes = new Map(routes.map((r) => [r.path, r]));
  }

  /** The error lines the routes logged (refusals are logged at lower levels). */
  get logged(): Record<string, unknown>[] {
    return this.logs.entries().filter((e) => e['level'] === 'error');
  }

  /** Registers an API key for `userId` through the engine, sealed as production does. */
  async key(
    userId: number,
    permissions: KeyPermissions = ALL_PERMISSIONS,
    ips: string[] = [],
    options: { readonly replayProtection?: boolean } = {},
  ): Promise<Credentials> {
    const c = generateApiCredentials();
    await this.venue.must({
      type: 'CreateApiKey',
      userId,
      accessKey: c.accessKey,
      sealedSecret: this.sealer.seal(c.secretHash, c.accessKey),
      permissions,
      ips,
      ...options,
    });
    return { accessKey: c.accessKey, secret: c.secret };
  }

  /** Builds a signed request as ccxt does: params, method, accesskey; then sign and reqTime appended. */
  request(
    method: string,
    creds: Credentials,
    params: Readonly<Record<string, string>> = {},
    options: {
      ip?: string;
      reqTime?: string | null;
      /** 'decoded' (ccxt), 'raw' (percent-encoded, as Go and PHP sign), or a literal sign. */
      sign?: 'decoded' | 'raw' | string;
      withMethod?: boolean;
      extra?: RequestParam[];
    } = {},
  ): ApiRequest {
    // 20 ms per request keeps a test's calls under the per-key limit of 60 per second.
    this.venue.time += 20;
    const list: RequestParam[] = [];
    const add = (name: string, value: string): void => {
      list.push({ name, value, raw: `${encodeURIComponent(name)}=${encodeURIComponent(value)}` });
    };
    for (const [k, v] of Object.entries(params)) add(k, v);
    if (options.withMethod !== false && !('method' in params)) add('method', method);
    if (!('accesskey' in params)) add('accesskey', creds.accessKey);
    list.push(...(options.extra ?? []));
    const hash = secretHash(creds.secret);
    const how = options.sign ?? 'decoded';
    const sign =
      how === 'decoded'
        ? hmacMd5Hex(hash, decodedSignedString(list))
        : how === 'raw'
          ? hmacMd5Hex(hash, rawSignedString(list))
          : how;
    add('sign', sign);
    const reqTime = options.reqTime === undefined ? String(this.venue.time) : options.reqTime;
    if (reqTime !== null) add('reqTime', reqTime);
    return {
      method: 'GET',
      path: `/api/${method}`,
      params: list,
      ip: options.ip ?? '10.0.0.1',
      headers: { 'user-agent': 'Mozilla/5.0' },
      receivedAt: this.venue.time,
    };
  }

  async send(request: ApiRequest): Promise<ApiReply> {
    const route = this.routes.get(request.path);
    if (route === undefined) throw new Error(`no route ${request.path}`);
    return route.handler(request);
  }

  /** Signs and sends; returns the reply's JSON body. */
  async call(
    method: string,
    creds: Credentials,
    params: Readonly<Record<string, string>> = {},
    options: Parameters<SignedApiHarness['request']>[3] = {},
  ): Promise<unknown> {
    const reply = await this.send(this.request(method, creds, params, options));
    if (!('json' in reply)) throw new Error('expected a JSON reply');
    return reply.json;
  }
}
