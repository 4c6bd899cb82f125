/**
 * @module venue-changes — the operator's runtime changes (issue 16), each a journaled command so
 * that a replay reproduces it: add or change a coin (with its chains) or a market, close a market,
 * freeze or unfreeze a user, cancel a user's orders, set or clear a user's withdrawal limit, and
 * rotate an API key's secret. The state stays where it lives (coins, markets, users and keys in the
 * registry; chains and limits in funds; orders in matching); this module checks and applies.
 *
 * Every refusal changes nothing and emits nothing. docs/operations.md ("Changing the venue while
 * it runs") describes each command as the operator meets it.
 */
import { validateCoinFunds, type CoinFunds } from '../domain/chains.ts';
import {
  ACCESS_KEY,
  VENUE_CHANGE_COMMAND_TYPES,
  type AddCoin,
  type AddMarket,
  type CancelUserOrders,
  type ChangeCoin,
  type ChangeMarket,
  type CloseMarket,
  type RotateApiKey,
  type SetUserStatus,
  type SetWithdrawLimit,
  type VenueChangeCommand,
} from '../domain/commands.ts';
import type { CancelReason } from '../domain/events.ts';
import { checkCoinName, validateCoin, validateMarket, type CoinSpec } from '../domain/specs.ts';
import { refused, type CommandContext } from './command-context.ts';
import type { ApplyResult } from './results.ts';
import type { Funds } from './funds.ts';
import type { Registry, User } from './registry.ts';

const TYPES: ReadonlySet<string> = new Set(VENUE_CHANGE_COMMAND_TYPES);

/** Whether a command is a runtime change (the engine's dispatch). */
export const isVenueChangeCommand = (cmd: { readonly type: string }): cmd is VenueChangeCommand =>
  TYPES.has(cmd.type);

/** What the changes need of matching: cancelling a user's resting orders in one market. */
export interface OrderCanceller {
  cancelAllIn(userId: number, market: string, reason: CancelReason): number;
}

export class VenueChanges {
  readonly #ctx: CommandContext;
  readonly #registry: Registry;
  readonly #funds: Funds;
  readonly #orders: OrderCanceller;

  constructor(ctx: CommandContext, registry: Registry, funds: Funds, orders: OrderCanceller) {
    this.#ctx = ctx;
    this.#registry = registry;
    this.#funds = funds;
    this.#orders = orders;
  }

  apply(cmd: VenueChangeCommand): ApplyResult {
    switch (cmd.type) {
      case 'AddCoin':
        return this.#addCoin(cmd);
      case 'ChangeCoin':
        return this.#changeCoin(cmd);
      case 'AddMarket':
        return this.#addMarket(cmd);
      case 'ChangeMarket':
        return this.#changeMarket(cmd);
      case 'CloseMarket':
        return this.#closeMarket(cmd);
      case 'SetUserStatus':
        return this.#setUserStatus(cmd);
      case 'CancelUserOrders':
        return this.#cancelUserOrders(cmd);
      case 'SetWithdrawLimit':
        return this.#setWithdrawLimit(cmd);
      case 'RotateApiKey':
        return this.#rotateApiKey(cmd);
    }
  }

  #ok(): ApplyResult {
    return { result: 'OK', events: this.#ctx.events };
  }

  /** The problems of a coin's funds configuration, given the coin specs it will join. */
  #fundsProblems(funds: CoinFunds, coin: CoinSpec): string[] {
    if (funds === null || typeof funds !== 'object') return ['funds must be an object'];
    if (funds.coin !== coin.name) return [`funds are for coin '${String(funds.coin)}', not ${coin.name}`];
    const coins = this.#registry.coinSpecs();
    coins.set(coin.name, coin);
    return validateCoinFunds(funds, coins);
  }

  /** AddCoin. Results: OK; INVALID_PARAMETER (shape, funds, a coin that exists). Events: CoinUpserted, CoinFundsSet. */
  #addCoin(cmd: AddCoin): ApplyResult {
    const coin = cmd.coin;
    if (coin === null || typeof coin !== 'object') return refused('INVALID_PARAMETER', 'coin missing');
    const problems = validateCoin(coin);
    if (problems.length > 0) return refused('INVALID_PARAMETER', problems.join('; '));
    if (this.#registry.coin(coin.name) !== undefined)
      return refused('INVALID_PARAMETER', `coin ${coin.name} exists: change it with coin change`);
    if (cmd.funds !== undefined) {
      const bad = this.#fundsProblems(cmd.funds, coin);
      if (bad.length > 0) return refused('INVALID_PARAMETER', bad.join('; '));
    }
    this.#registry.addCoin(coin);
    this.#ctx.events.push({ type: 'CoinUpserted', coin: { ...coin } });
    if (cmd.funds !== undefined) this.#setFunds(cmd.funds);
    return this.#ok();
  }

  /**
   * ChangeCoin. Results: OK; UNKNOWN_COIN; INVALID_PARAMETER (shape, funds, a chain dropped);
   * INVALID_STATE (unitDecimal changed). Events: CoinUpserted, then CoinFundsSet with `funds`.
   */
  #changeCoin(cmd: ChangeCoin): ApplyResult {
    const coin = cmd.coin;
    if (coin === null || typeof coin !== 'object') return refused('INVALID_PARAMETER', 'coin missing');
    const existing = this.#registry.coin(coin.name);
    if (existing === undefined) {
      const name = checkCoinName(String(coin.name));
      return name.ok
        ? refused('UNKNOWN_COIN', `unknown coin '${coin.name}'`)
        : refused(name.result, name.message);
    }
    const problems = validateCoin(coin);
    if (problems.length > 0) return refused('INVALID_PARAMETER', problems.join('; '));
    if (coin.unitDecimal !== existing.spec.unitDecimal)
      return refused('INVALID_STATE', `unitDecimal of ${coin.name} cannot change`);
    if (cmd.funds !== undefined) {
      const bad = this.#fundsProblems(cmd.funds, coin);
      if (bad.length > 0) return refused('INVALID_PARAMETER', bad.join('; '));
      // Addresses and records name their chain: a chain may be switched off, never dropped.
      const kept = new Set(cmd.funds.chains.map((c) => c.name));
      const dropped = (this.#funds.coinFunds(coin.name)?.chains ?? []).filter((c) => !kept.has(c.name));
      if (dropped.length > 0) {
        return refused(
          'INVALID_PARAMETER',
          `chain ${dropped.map((c) => c.name).join(', ')} of ${coin.name} cannot be removed: switch it off instead`,
        );
      }
    }
    existing.spec = { ...coin };
    this.#ctx.events.push({ type: 'CoinUpserted', coin: { ...coin } });
    if (cmd.funds !== undefined) this.#setFunds(cmd.funds);
    return this.#ok();
  }

  #setFunds(funds: CoinFunds): void {
    this.#funds.setCoinFunds(funds);
    const copy = { ...funds, chains: funds.chains.map((c) => ({ ...c })) };
    this.#ctx.events.push({ type: 'CoinFundsSet', funds: copy });
  }

  /**
   * AddMarket. Results: OK; INVALID_PARAMETER (shape, scales, fees — a rebate above the taker fee
   * —, unknown coins, a market that exists, status other than trading or halted). Event: MarketUpserted.
   */
  #addMarket(cmd: AddMarket): ApplyResult {
    const market = cmd.market;
    if (market === null || typeof market !== 'object') return refused('INVALID_PARAMETER', 'market missing');
    if (this.#registry.market(market.name) !== undefined)
      return refused('INVALID_PARAMETER', `market ${market.name} exists: change it with market change`);
    const problems = validateMarket(market, this.#registry.coinSpecs());
    if (problems.length > 0) return refused('INVALID_PARAMETER', problems.join('; '));
    if (market.status === 'closed')
      return refused('INVALID_PARAMETER', 'a new market starts trading or halted');
    this.#registry.addMarket(market);
    this.#ctx.events.push({ type: 'MarketUpserted', market: { ...market } });
    return this.#ok();
  }

  /**
   * ChangeMarket. Results: OK; UNKNOWN_MARKET; INVALID_PARAMETER (as AddMarket); INVALID_STATE (the
   * market is closed, or its coins or scales changed). Event: MarketUpserted.
   */
  #changeMarket(cmd: ChangeMarket): ApplyResult {
    const market = cmd.market;
    if (market === null || typeof market !== 'object') return refused('INVALID_PARAMETER', 'market missing');
    const existing = this.#registry.market(market.name);
    if (existing === undefined) return refused('UNKNOWN_MARKET', `unknown market '${market.name}'`);
    if (existing.spec.status === 'closed')
      return refused('INVALID_STATE', `market ${market.name} is closed for good`);
    const problems = validateMarket(market, this.#registry.coinSpecs());
    if (problems.length > 0) return refused('INVALID_PARAMETER', problems.join('; '));
    if (market.status === 'closed') return refused('INVALID_PARAMETER', 'close a market with market close');
    const s = existing.spec;
    if (market.priceScale !== s.priceScale || market.amountScale !== s.amountScale)
      return refused('INVALID_STATE', `the scales of market ${market.name} cannot change`);
    existing.spec = { ...market };
    this.#ctx.events.push({ type: 'MarketUpserted', market: { ...market } });
    return this.#ok();
  }

  /**
   * CloseMarket: every resting order is cancelled (reason `operator`, its funds released), oldest
   * user first, then the status is `closed` for good. Results: OK; UNKNOWN_MARKET; INVALID_STATE
   * (closed already). Events: per order OrderUpdated and BalanceChanged, then MarketStatusSet.
   */
  #closeMarket(cmd: CloseMarket): ApplyResult {
    const market = this.#registry.market(cmd.market);
    if (market === undefined) return refused('UNKNOWN_MARKET', `unknown market '${String(cmd.market)}'`);
    if (market.spec.status === 'closed')
      return refused('INVALID_STATE', `market ${cmd.market} is closed already`);
    const owners = new Set<number>();
    for (const user of this.#registry.users()) {
      for (const o of user.openOrders) if (o.market === cmd.market) owners.add(user.userId);
    }
    for (const userId of [...owners].sort((a, b) => a - b))
      this.#orders.cancelAllIn(userId, cmd.market, 'operator');
    market.spec = { ...market.spec, status: 'closed' };
    this.#ctx.events.push({ type: 'MarketStatusSet', market: cmd.market, status: 'closed' });
    return this.#ok();
  }

  #user(userId: number): User | ApplyResult {
    return this.#registry.user(userId) ?? refused('USER_NOT_FOUND', `no user with id ${String(userId)}`);
  }

  /** SetUserStatus. Results: OK; USER_NOT_FOUND; INVALID_PARAMETER (status); INVALID_STATE (already so). Event: UserStatusSet. */
  #setUserStatus(cmd: SetUserStatus): ApplyResult {
    const user = this.#user(cmd.userId);
    if ('result' in user) return user;
    if (cmd.status !== 'active' && cmd.status !== 'frozen')
      return refused('INVALID_PARAMETER', "status must be 'active' or 'frozen'");
    if (user.status === cmd.status)
      return refused('INVALID_STATE', `user ${user.name} is ${cmd.status} already`);
    user.status = cmd.status;
    this.#ctx.events.push({
      type: 'UserStatusSet',
      userId: user.userId,
      status: cmd.status,
      time: this.#ctx.time,
    });
    return this.#ok();
  }

  /**
   * CancelUserOrders: the user's resting orders in `market` (or every market for ''), market by
   * market in the order markets were added. Results: OK (none to cancel is OK); USER_NOT_FOUND;
   * UNKNOWN_MARKET. Events: per order OrderUpdated and BalanceChanged.
   */
  #cancelUserOrders(cmd: CancelUserOrders): ApplyResult {
    const user = this.#user(cmd.userId);
    if ('result' in user) return user;
    if (cmd.market !== '' && this.#registry.market(cmd.market) === undefined)
      return refused('UNKNOWN_MARKET', `unknown market '${String(cmd.market)}'`);
    const markets = cmd.market === '' ? this.#registry.marketStates().map((m) => m.spec.name) : [cmd.market];
    for (const m of markets) this.#orders.cancelAllIn(user.userId, m, 'operator');
    return this.#ok();
  }

  /**
   * SetWithdrawLimit. Results: OK; USER_NOT_FOUND; UNKNOWN_COIN; INVALID_PARAMETER (limit not a safe
   * integer ≥ 0 or null; the coin has no chains). Event: WithdrawLimitSet.
   */
  #setWithdrawLimit(cmd: SetWithdrawLimit): ApplyResult {
    const user = this.#user(cmd.userId);
    if ('result' in user) return user;
    if (this.#registry.coin(cmd.coin) === undefined)
      return refused('UNKNOWN_COIN', `unknown coin '${String(cmd.coin)}'`);
    if (this.#funds.coinFunds(cmd.coin) === undefined)
      return refused('INVALID_PARAMETER', `coin ${cmd.coin} has no chains: it cannot be withdrawn`);
    if (cmd.limit !== null && (!Number.isSafeInteger(cmd.limit) || cmd.limit < 0))
      return refused('INVALID_PARAMETER', 'limit must be an amount ≥ 0, or cleared');
    this.#funds.setWithdrawLimit(user.userId, cmd.coin, cmd.limit);
    this.#ctx.events.push({
      type: 'WithdrawLimitSet',
      userId: user.userId,
      coin: cmd.coin,
      limit: cmd.limit,
      time: this.#ctx.time,
    });
    return this.#ok();
  }

  /** RotateApiKey. Results: OK; UNKNOWN_REFERENCE (no such key); INVALID_PARAMETER (sealed secret). Event: ApiKeyRotated. */
  #rotateApiKey(cmd: RotateApiKey): ApplyResult {
    const key =
      typeof cmd.accessKey === 'string' && ACCESS_KEY.test(cmd.accessKey)
        ? this.#registry.apiKey(cmd.accessKey)
        : undefined;
    if (key === undefined) return refused('UNKNOWN_REFERENCE', 'no such access key');
    const sealed = cmd.sealedSecret;
    if (typeof sealed !== 'string' || sealed.length === 0 || sealed.length > 1024)
      return refused('INVALID_PARAMETER', 'sealed secret missing');
    if (sealed === key.sealedSecret) return refused('INVALID_PARAMETER', 'the new secret equals the old one');
    this.#registry.setSealedSecret(key.accessKey, sealed);
    this.#ctx.events.push({
      type: 'ApiKeyRotated',
      userId: key.userId,
      accessKey: key.accessKey,
      time: this.#ctx.time,
    });
    return this.#ok();
  }
}
