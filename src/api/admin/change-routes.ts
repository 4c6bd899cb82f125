/**
 * @module change-routes — the operator's runtime changes (issue 16, "Change"): coins (add, change,
 * with their chains), markets (add, change, close), users (freeze, unfreeze, cancel their orders,
 * a withdrawal limit) and API keys (list, revoke, rotate, reissue after a master-key change). Each
 * change is one journaled command (src/engine/venue-changes.ts), so a replay reproduces it.
 *
 * Amounts are decimal text at the coin's scale; fee rates are decimal fractions ("0.002" is 0.2 %,
 * "-0.0005" a maker rebate of 0.05 %). A bad parameter, an unknown user, coin or market, or a coin
 * or market that exists is refused with the interface's code and a message naming it, before or
 * inside the engine, and changes nothing.
 */
import { CHAIN_NAME, validateCoinFunds, type ChainSpec, type CoinFunds } from '../../domain/chains.ts';
import { permissionNames, type Command } from '../../domain/commands.ts';
import { formatUnitsTrim, parseDecimal } from '../../domain/money.ts';
import {
  checkCoinName,
  MAX_FEE_PPM,
  splitMarketName,
  validateCoin,
  validateMarket,
  type CoinSpec,
  type MarketSpec,
} from '../../domain/specs.ts';
import type { ApiKeyRecord } from '../../engine/engine.ts';
import {
  param,
  paramText,
  type ApiReply,
  type ApiRequest,
  type Route,
  type VenuePort,
} from '../http/types.ts';
import { plainInteger, readAnyCaseCoin, readInteger, readOnOff } from '../edge/readers.ts';
import { fail, fromResult, ok, userOf } from './admin-reply.ts';
import { knownMarketParam } from './views-routes.ts';
import { quoted } from '../edge/refusal.ts';

/** New secrets for existing keys (the secret is shown once; only its sealed hash is kept). */
export interface KeyRenewer {
  /** A new secret for `accessKey`, sealed under the current master key. */
  renew(accessKey: string): { secretKey: string; sealedSecret: string };
  /** Whether the current master key opens `sealedSecret` (false: the key must be reissued). */
  opens(sealedSecret: string, accessKey: string): boolean;
}

export interface ChangeDeps {
  readonly venue: VenuePort;
  /** Absent: `keys rotate` and `keys reissue` are refused (no master key at hand). */
  readonly keys?: KeyRenewer | undefined;
}

/** The paths of change-routes that only read (the audit log records the others). */
export const CHANGE_READ_PATHS: readonly string[] = ['/admin/keys/list'];

/** The most keys one `keys list` answers. */
const MAX_KEYS_LISTED = 1000;

/** `true`/`on`/`false`/`off` (any case), the default when absent, or the refusal. */
function flag(request: ApiRequest, name: string, absent: boolean | undefined): boolean | undefined {
  const text = paramText(request, name);
  return text === undefined ? absent : readOnOff(name, text);
}

/** A small integer parameter in [min, max], the default when absent, or the refusal. */
function integer(
  request: ApiRequest,
  name: string,
  min: number,
  max: number,
  absent?: number,
): number | undefined {
  const text = paramText(request, name);
  return text === undefined ? absent : readInteger(name, text, min, max);
}

/** Decimal text at `scale` (≥ 0), or the refusal; undefined when absent. */
function amount(request: ApiRequest, name: string, scale: number, unit: string): number | undefined {
  const text = param(request, name);
  if (text === undefined) return undefined;
  const v = parseDecimal(text, scale);
  return (
    v ??
    fail(
      'INVALID_AMOUNT',
      `${name} ${quoted(text)} must be an amount of ${unit} with at most ${scale} decimals`,
    )
  );
}

/**
 * A fee rate as a decimal fraction ("0.002", "-0.0005") → ppm, or the refusal; undefined when
 * absent. Range: −MAX_FEE_PPM..MAX_FEE_PPM here; the engine checks a rebate against the taker fee.
 */
export function feeRate(request: ApiRequest, name: string): number | undefined {
  const text = param(request, name);
  if (text === undefined) return undefined;
  const negative = text.startsWith('-');
  const v = parseDecimal(negative ? text.slice(1) : text, 6);
  const max = formatUnitsTrim(MAX_FEE_PPM, 6);
  if (v === undefined || v > MAX_FEE_PPM) {
    fail(
      'INVALID_PARAMETER',
      `${name} ${quoted(text)} must be a fraction from -${max} to ${max} with at most 6 decimals (0.002 is 0.2%)`,
    );
  }
  return negative ? -v : v;
}

const rateText = (ppm: number): string => formatUnitsTrim(ppm, 6);

const CHAIN_FIELDS = [
  'name',
  'mainChain',
  'memo',
  'confirmations',
  'withdrawFee',
  'minWithdraw',
  'canDeposit',
  'canWithdraw',
] as const;

/** Whether two funds configurations say the same (whatever the order of their keys). */
function sameFunds(a: CoinFunds | undefined, b: CoinFunds | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.dailyWithdrawLimit === b.dailyWithdrawLimit &&
    a.autoApproveLimit === b.autoApproveLimit &&
    a.chains.length === b.chains.length &&
    a.chains.every((c, i) => CHAIN_FIELDS.every((f) => c[f] === b.chains[i]?.[f]))
  );
}

/** A coin's spec and chains as the routes answer them: amounts in decimal text. */
function coinView(coin: CoinSpec, funds: CoinFunds | undefined): Record<string, unknown> {
  const units = (n: number): string => formatUnitsTrim(n, coin.unitDecimal);
  return {
    coin: coin.name,
    ...coin,
    chains: (funds?.chains ?? []).map((c) => ({
      ...c,
      withdrawFee: units(c.withdrawFee),
      minWithdraw: units(c.minWithdraw),
    })),
    dailyWithdrawLimit: funds === undefined ? null : units(funds.dailyWithdrawLimit),
    autoApproveLimit: funds === undefined ? null : units(funds.autoApproveLimit),
  };
}

function marketView(m: MarketSpec, quoteDecimal: number): Record<string, unknown> {
  return {
    market: m.name,
    base: m.base,
    quote: m.quote,
    priceScale: m.priceScale,
    amountScale: m.amountScale,
    minAmount: formatUnitsTrim(m.minAmount, m.amountScale),
    minSize: formatUnitsTrim(m.minSize, quoteDecimal),
    makerFee: rateText(m.makerFee),
    takerFee: rateText(m.takerFee),
    status: m.status,
  };
}

/**
 * A chain from its compact form `NAME:MAINCHAIN:confirmations:withdrawFee:minWithdraw[:memo]`
 * (fees and minimums in decimal text of the coin), or a problem.
 */
export function parseChain(text: string, unitDecimal: number): ChainSpec | string {
  const parts = text.split(':');
  const [name = '', mainChain = '', conf = '', fee = '', min = '', memo] = parts;
  const usage = `chain ${quoted(text)} must be NAME:MAINCHAIN:confirmations:withdrawFee:minWithdraw[:memo], e.g. SOL:SOL:32:0.01:0.1`;
  if (parts.length < 5 || parts.length > 6 || (memo !== undefined && memo !== 'memo')) return usage;
  if (!CHAIN_NAME.test(name.toUpperCase()) || !CHAIN_NAME.test(mainChain.toUpperCase())) return usage;
  const confirmations = plainInteger(conf) ?? NaN;
  const withdrawFee = parseDecimal(fee, unitDecimal);
  const minWithdraw = parseDecimal(min, unitDecimal);
  if (!(confirmations >= 1 && confirmations <= 10_000)) return `${usage}: confirmations 1 to 10000`;
  if (withdrawFee === undefined || minWithdraw === undefined)
    return `${usage}: amounts with at most ${unitDecimal} decimals`;
  return {
    name: name.toUpperCase(),
    mainChain: mainChain.toUpperCase(),
    memo: memo === 'memo',
    confirmations,
    withdrawFee,
    minWithdraw,
    canDeposit: true,
    canWithdraw: true,
  };
}

export function changeRoutes(deps: ChangeDeps): Route[] {
  const { venue } = deps;
  const engine = venue.engine;

  const coinNamed = (request: ApiRequest): string => {
    const name = (param(request, 'coin') ?? '').toLowerCase();
    const check = checkCoinName(name);
    return check.ok ? name : fail(check.result, check.message);
  };
  const knownCoin = (request: ApiRequest): CoinSpec =>
    readAnyCaseCoin(engine, 'coin', paramText(request, 'coin'));
  const knownMarket = (request: ApiRequest): MarketSpec => knownMarketParam(engine, request);
  const coinSpecs = (extra?: CoinSpec): Map<string, CoinSpec> => {
    const coins = new Map(engine.coins().map((c) => [c.name, c]));
    if (extra !== undefined) coins.set(extra.name, extra);
    return coins;
  };
  /**
   * The engine's own checks (src/domain/specs.ts, chains.ts) run here first, so that a bad spec
   * is refused before it is journaled: the state, its sequence position included, is unchanged.
   */
  const checked = (problems: readonly string[]): void => {
    if (problems.length > 0) fail('INVALID_PARAMETER', problems.join('; '));
  };
  const submit = async (cmd: Command, data: () => Record<string, unknown>): Promise<ApiReply> => {
    const r = await venue.submit(cmd);
    return fromResult(r, r.result === 'OK' ? data() : {});
  };

  /** The funds part of coin add/change: limits, new chains, and changes to one named chain. */
  const fundsFrom = (
    request: ApiRequest,
    coin: CoinSpec,
    current: CoinFunds | undefined,
  ): CoinFunds | undefined => {
    const unit = coin.name;
    const added: ChainSpec[] = [];
    for (const p of request.params.filter((x) => x.name === 'addChain')) {
      const chain = parseChain(p.value, coin.unitDecimal);
      if (typeof chain === 'string') fail('INVALID_PARAMETER', chain);
      added.push(chain);
    }
    const daily = amount(request, 'dailyWithdrawLimit', coin.unitDecimal, unit);
    const auto = amount(request, 'autoApproveLimit', coin.unitDecimal, unit);
    let chains = [...(current?.chains ?? [])];
    const chainName = param(request, 'chain');
    if (chainName !== undefined) {
      const i = chains.findIndex((c) => c.name === chainName.toUpperCase());
      const c = chains[i];
      if (c === undefined) {
        const names = chains.map((x) => x.name).join(', ') || 'none';
        fail('INVALID_PARAMETER', `${unit} has no chain ${quoted(chainName)} (its chains: ${names})`);
      }
      const withdrawFee = amount(request, 'withdrawFee', coin.unitDecimal, unit);
      const minWithdraw = amount(request, 'minWithdraw', coin.unitDecimal, unit);
      const confirmations = integer(request, 'confirmations', 1, 10_000);
      const canDeposit = flag(request, 'chainDeposit', c.canDeposit);
      const canWithdraw = flag(request, 'chainWithdraw', c.canWithdraw);
      chains = chains.with(i, {
        ...c,
        withdrawFee: (withdrawFee as number | undefined) ?? c.withdrawFee,
        minWithdraw: (minWithdraw as number | undefined) ?? c.minWithdraw,
        confirmations: (confirmations as number | undefined) ?? c.confirmations,
        canDeposit: canDeposit as boolean,
        canWithdraw: canWithdraw as boolean,
      });
    } else {
      for (const name of ['withdrawFee', 'minWithdraw', 'confirmations', 'chainDeposit', 'chainWithdraw']) {
        if (param(request, name) !== undefined)
          fail('INVALID_PARAMETER', `${name} changes one chain: name it with chain`);
      }
    }
    chains.push(...added);
    if (chains.length === 0) {
      if (daily !== undefined || auto !== undefined)
        fail('INVALID_PARAMETER', `${unit} moves on no chain: add one with addChain first`);
      return undefined;
    }
    if (current === undefined && daily === undefined) {
      fail('INVALID_PARAMETER', `dailyWithdrawLimit is required with the first chain of ${unit}`);
    }
    return {
      coin: coin.name,
      chains,
      dailyWithdrawLimit: daily ?? current?.dailyWithdrawLimit ?? 0,
      autoApproveLimit: auto ?? current?.autoApproveLimit ?? 0,
    };
  };

  const keyView = (k: ApiKeyRecord): Record<string, unknown> => ({
    accessKey: k.accessKey,
    user: engine.userName(k.userId),
    userId: k.userId,
    permissions: permissionNames(k.permissions),
    ips: k.ips,
    replayProtection: k.replayProtection === true,
    opens: deps.keys === undefined ? null : deps.keys.opens(k.sealedSecret, k.accessKey),
  });
  const knownKey = (request: ApiRequest): ApiKeyRecord => {
    const text = param(request, 'key') ?? '';
    return engine.apiKey(text) ?? fail('UNKNOWN_REFERENCE', `no API key ${quoted(text)}`);
  };

  return [
    {
      /**
       * coin, unitDecimal, [enName], [cnName], [showName], [fundsType], [canDeposit], [canWithdraw],
       * [addChain]…, [dailyWithdrawLimit] (required with a chain), [autoApproveLimit].
       */
      path: '/admin/coins/add',
      handler: async (request) => {
        const name = coinNamed(request);
        if (engine.coin(name) !== undefined)
          fail('INVALID_PARAMETER', `coin ${name} exists: change it with coin change`);
        const unitDecimal = integer(request, 'unitDecimal', 0, 15);
        if (unitDecimal === undefined) fail('INVALID_PARAMETER', 'unitDecimal is required (0 to 15)');
        const fundsType = integer(
          request,
          'fundsType',
          0,
          1_000_000,
          Math.max(0, ...engine.coins().map((c) => c.fundsType)) + 1,
        );
        const canDeposit = flag(request, 'canDeposit', true);
        const canWithdraw = flag(request, 'canWithdraw', true);
        const enName = param(request, 'enName') ?? name.toUpperCase();
        const coin: CoinSpec = {
          name,
          unitDecimal,
          enName,
          cnName: param(request, 'cnName') ?? enName,
          showName: param(request, 'showName') ?? enName,
          fundsType: fundsType as number,
          canDeposit: canDeposit as boolean,
          canWithdraw: canWithdraw as boolean,
        };
        const funds = fundsFrom(request, coin, undefined);
        checked([
          ...validateCoin(coin),
          ...(funds === undefined ? [] : validateCoinFunds(funds, coinSpecs(coin))),
        ]);
        return submit({ type: 'AddCoin', coin, ...(funds !== undefined && { funds }) }, () =>
          coinView(coin, funds),
        );
      },
    },
    {
      /**
       * coin, and what changes: [enName], [cnName], [showName], [canDeposit], [canWithdraw],
       * [dailyWithdrawLimit], [autoApproveLimit], [addChain]…, or one chain's [withdrawFee],
       * [minWithdraw], [confirmations], [chainDeposit], [chainWithdraw] with chain.
       */
      path: '/admin/coins/change',
      handler: async (request) => {
        const coin = knownCoin(request);
        const canDeposit = flag(request, 'canDeposit', coin.canDeposit);
        const canWithdraw = flag(request, 'canWithdraw', coin.canWithdraw);
        const changed: CoinSpec = {
          ...coin,
          enName: param(request, 'enName') ?? coin.enName,
          cnName: param(request, 'cnName') ?? coin.cnName,
          showName: param(request, 'showName') ?? coin.showName,
          canDeposit: canDeposit as boolean,
          canWithdraw: canWithdraw as boolean,
        };
        const current = engine.funds.coinFunds(coin.name);
        const funds = fundsFrom(request, changed, current);
        const fundsChanged = !sameFunds(funds, current);
        if (JSON.stringify(changed) === JSON.stringify(coin) && !fundsChanged)
          fail('INVALID_PARAMETER', `nothing to change: name what changes (coin change --help)`);
        checked(funds === undefined ? [] : validateCoinFunds(funds, coinSpecs(changed)));
        return submit(
          { type: 'ChangeCoin', coin: changed, ...(funds !== undefined && fundsChanged && { funds }) },
          () => coinView(changed, funds),
        );
      },
    },
    {
      /** market (base_quote), priceScale, amountScale, minAmount, minSize, [makerFee], [takerFee] (default 0.002), [status]. */
      path: '/admin/markets/add',
      handler: async (request) => {
        const name = param(request, 'market') ?? '';
        // The signed API's rule: lowercase names only, an uppercase one refused with the name to type.
        if (name !== name.toLowerCase())
          fail(
            'INVALID_PARAMETER',
            `market ${quoted(name)} must be lowercase (${quoted(name.toLowerCase())})`,
          );
        const split = splitMarketName(name);
        if (split === undefined)
          fail('INVALID_PARAMETER', `market ${quoted(name)} must be <base>_<quote>, e.g. sol_usdt`);
        if (engine.market(name) !== undefined)
          fail('INVALID_PARAMETER', `market ${name} exists: change it with market change`);
        for (const c of [split.base, split.quote]) {
          const check = checkCoinName(c);
          if (!check.ok) fail(check.result, check.message);
          if (engine.coin(c) === undefined)
            fail('UNKNOWN_COIN', `unknown coin '${c}': add it first with coin add`);
        }
        const base = engine.coin(split.base) as CoinSpec;
        const quote = engine.coin(split.quote) as CoinSpec;
        const priceScale = integer(request, 'priceScale', 0, 12);
        const amountScale = integer(request, 'amountScale', 0, 12);
        if (priceScale === undefined || amountScale === undefined)
          fail('INVALID_PARAMETER', 'priceScale and amountScale are required');
        const minAmount = amount(request, 'minAmount', amountScale, base.name);
        const minSize = amount(request, 'minSize', quote.unitDecimal, quote.name);
        const makerFee = feeRate(request, 'makerFee');
        const takerFee = feeRate(request, 'takerFee');
        if (minAmount === undefined || minSize === undefined)
          fail('INVALID_PARAMETER', 'minAmount and minSize are required');
        const status = param(request, 'status') ?? 'trading';
        if (status !== 'trading' && status !== 'halted')
          fail('INVALID_PARAMETER', "status must be 'trading' or 'halted'");
        const market: MarketSpec = {
          name,
          base: base.name,
          quote: quote.name,
          priceScale,
          amountScale,
          minAmount: minAmount as number,
          minSize: minSize as number,
          makerFee: (makerFee as number | undefined) ?? 2_000,
          takerFee: (takerFee as number | undefined) ?? 2_000,
          status,
        };
        checked(validateMarket(market, coinSpecs()));
        return submit({ type: 'AddMarket', market }, () => marketView(market, quote.unitDecimal));
      },
    },
    {
      /** market, and what changes: [minAmount], [minSize], [makerFee], [takerFee]. */
      path: '/admin/markets/change',
      handler: async (request) => {
        const m = knownMarket(request);
        const quote = engine.coin(m.quote) as CoinSpec;
        const minAmount = amount(request, 'minAmount', m.amountScale, m.base);
        const minSize = amount(request, 'minSize', quote.unitDecimal, quote.name);
        const makerFee = feeRate(request, 'makerFee');
        const takerFee = feeRate(request, 'takerFee');
        const market: MarketSpec = {
          ...m,
          minAmount: (minAmount as number | undefined) ?? m.minAmount,
          minSize: (minSize as number | undefined) ?? m.minSize,
          makerFee: (makerFee as number | undefined) ?? m.makerFee,
          takerFee: (takerFee as number | undefined) ?? m.takerFee,
        };
        if (JSON.stringify(market) === JSON.stringify(m))
          fail('INVALID_PARAMETER', 'nothing to change: give minAmount, minSize, makerFee or takerFee');
        checked(validateMarket(market, coinSpecs()));
        return submit({ type: 'ChangeMarket', market }, () => marketView(market, quote.unitDecimal));
      },
    },
    {
      /** market: its resting orders cancelled, funds released, closed for good. */
      path: '/admin/markets/close',
      handler: async (request) => {
        const m = knownMarket(request);
        const before = engine.openOrderCount;
        return submit({ type: 'CloseMarket', market: m.name }, () => ({
          market: m.name,
          status: 'closed',
          cancelled: before - engine.openOrderCount,
        }));
      },
    },
    ...(['freeze', 'unfreeze'] as const).map((verb): Route => ({
      /** user: frozen (no orders, no withdrawals; reads and cancels work) or active again. */
      path: `/admin/users/${verb}`,
      handler: async (request) => {
        const userId = userOf(venue, request);
        const status = verb === 'freeze' ? 'frozen' : 'active';
        return submit({ type: 'SetUserStatus', userId, status }, () => ({
          user: engine.userName(userId),
          status,
        }));
      },
    })),
    {
      /** user, [market]: the user's resting orders (in the market, or all) cancelled. */
      path: '/admin/users/cancel-orders',
      handler: async (request) => {
        const userId = userOf(venue, request);
        const named = param(request, 'market');
        const m = named === undefined ? undefined : knownMarket(request);
        const before = engine.openOrders(userId).length;
        return submit({ type: 'CancelUserOrders', userId, market: m?.name ?? '' }, () => ({
          user: engine.userName(userId),
          market: m?.name ?? null,
          cancelled: before - engine.openOrders(userId).length,
        }));
      },
    },
    {
      /** user, coin, limit (decimal, per UTC day) or clear=true: the user's own withdrawal limit. */
      path: '/admin/users/withdraw-limit',
      handler: async (request) => {
        const userId = userOf(venue, request);
        const coin = knownCoin(request);
        const clear = flag(request, 'clear', false);
        const limit = amount(request, 'limit', coin.unitDecimal, coin.name);
        if ((limit === undefined) === (clear !== true))
          fail('INVALID_PARAMETER', 'give either limit (an amount per UTC day) or clear=true');
        const funds = engine.funds.coinFunds(coin.name);
        return submit({ type: 'SetWithdrawLimit', userId, coin: coin.name, limit: limit ?? null }, () => ({
          user: engine.userName(userId),
          coin: coin.name,
          limit: limit === undefined ? null : formatUnitsTrim(limit, coin.unitDecimal),
          coinLimit: funds === undefined ? null : formatUnitsTrim(funds.dailyWithdrawLimit, coin.unitDecimal),
        }));
      },
    },
    {
      /** [user], [limit], [offset]: API keys (never secrets), with whether the master key opens each. */
      path: '/admin/keys/list',
      handler: (request) => {
        let keys: ApiKeyRecord[];
        if (param(request, 'user') !== undefined) {
          const userId = userOf(venue, request);
          keys = engine.apiKeysOf(userId);
        } else {
          keys = engine.apiKeys();
        }
        const limit = integer(request, 'limit', 1, MAX_KEYS_LISTED, 50);
        const offset = integer(request, 'offset', 0, 1_000_000_000, 0);
        const page = keys.slice(offset, (offset as number) + (limit as number));
        return ok({ total: keys.length, offset, limit, keys: page.map(keyView) });
      },
    },
    {
      /** key: deleted; requests signed with it fail from now on. */
      path: '/admin/keys/revoke',
      handler: async (request) => {
        const key = knownKey(request);
        return submit({ type: 'DeleteApiKey', accessKey: key.accessKey }, () => ({
          accessKey: key.accessKey,
          user: engine.userName(key.userId),
          revoked: true,
        }));
      },
    },
    {
      /** key: a new secret (shown once), same permissions, IPs and strict mode; the old secret stops. */
      path: '/admin/keys/rotate',
      handler: async (request) => {
        const key = knownKey(request);
        if (deps.keys === undefined) fail('INVALID_STATE', 'this server cannot seal new secrets');
        const { secretKey, sealedSecret } = deps.keys.renew(key.accessKey);
        return submit({ type: 'RotateApiKey', accessKey: key.accessKey, sealedSecret }, () => ({
          ...keyView({ ...key, sealedSecret }),
          secretKey,
        }));
      },
    },
    {
      /**
       * [user]: every key (of the user, or all) whose secret the current master key cannot open
       * gets a new secret, shown once: after the master key was lost and replaced.
       */
      path: '/admin/keys/reissue',
      handler: async (request) => {
        const renewer = deps.keys;
        if (renewer === undefined) fail('INVALID_STATE', 'this server cannot seal new secrets');
        let keys = engine.apiKeys();
        if (param(request, 'user') !== undefined) {
          const userId = userOf(venue, request);
          keys = engine.apiKeysOf(userId);
        }
        const stale = keys.filter((k) => !renewer.opens(k.sealedSecret, k.accessKey));
        const reissued: Record<string, unknown>[] = [];
        for (const key of stale) {
          const { secretKey, sealedSecret } = renewer.renew(key.accessKey);
          const r = await venue.submit({ type: 'RotateApiKey', accessKey: key.accessKey, sealedSecret });
          if (r.result !== 'OK') return fromResult(r, { reissued });
          reissued.push({ ...keyView({ ...key, sealedSecret }), secretKey });
        }
        return ok({ reissued, checked: keys.length });
      },
    },
  ];
}
