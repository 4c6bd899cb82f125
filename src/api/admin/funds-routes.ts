/**
 * @module funds-routes — the operator's funds API (under the admin token, used by the `bourse`
 * CLI): deposit addresses, withdrawal address books, fund passwords, the withdrawals waiting for
 * approval, and the simulated chain (deposit from outside, mine blocks, fail a transaction).
 *
 * Every route answers `{code, message, …}`: 1000 with data, or the code of what went wrong (an
 * unknown user 3004, a bad parameter 3005, …) with a message naming it. Nothing is changed by a
 * refused call. Coin names may come in any letter case; chain names too.
 */
import { joinAddress } from '../../domain/chains.ts';
import { formatUnitsTrim, parseDecimal } from '../../domain/money.ts';
import type { CoinSpec } from '../../domain/specs.ts';
import type { ChainAdapter } from '../../chain/chain-port.ts';
import { ChainError, type SimulatedChain } from '../../chain/simulated-chain.ts';
import { FUND_PASSWORD, hashFundPassword } from '../auth/fund-password.ts';
import {
  param,
  paramText,
  type ApiReply,
  type ApiRequest,
  type Route,
  type VenuePort,
} from '../http/types.ts';
import { plainInteger, readAnyCaseCoin, readInteger } from '../edge/readers.ts';
import { fail, fromResult, ok, userOf } from './admin-reply.ts';
import { withdrawalsFilter } from './activity-routes.ts';
import { quoted } from '../edge/refusal.ts';

/** The most blocks one `chain mine` may mine. */
export const MAX_BLOCKS_PER_MINE = 10_000;

export interface FundsAdminDeps {
  readonly venue: VenuePort;
  /** One adapter per coin and chain of the funds configuration (asked each time: coins are added at run time). */
  readonly chains: () => readonly ChainAdapter[];
  /** The simulated network that `chain deposit | mine | fail` drive; undefined with real chains. */
  readonly simulator: SimulatedChain | undefined;
  /** Resolves after the chain watcher's next pass: the engine has seen what the chain did. */
  readonly syncChains: () => Promise<void>;
}

/** The coin a parameter names, in any letter case, or the refusal. */
function coinOf(venue: VenuePort, request: ApiRequest): CoinSpec {
  return readAnyCaseCoin(venue.engine, 'coin', paramText(request, 'coin'));
}

export function fundsAdminRoutes(deps: FundsAdminDeps): Route[] {
  const { venue } = deps;
  const funds = venue.engine.funds;

  /** The chain of `coin` the `chain` parameter names (any case), or the coin's first. */
  const chainOf = (request: ApiRequest, coin: string): ChainAdapter => {
    const chains = funds.coinFunds(coin)?.chains ?? [];
    if (chains.length === 0) fail('INVALID_PARAMETER', `${coin} moves on no chain`);
    const name = (param(request, 'chain') ?? '').toUpperCase();
    const chain = name === '' ? chains[0] : chains.find((c) => c.name === name);
    const adapter =
      chain === undefined
        ? undefined
        : deps.chains().find((a) => a.coin === coin && a.chain.name === chain.name);
    return (
      adapter ??
      fail(
        'INVALID_PARAMETER',
        `${coin} has no chain '${name}': use one of ${chains.map((c) => c.name).join(', ')}`,
      )
    );
  };

  const withdrawalId = (request: ApiRequest): string => {
    const id = param(request, 'id') ?? '';
    return plainInteger(id) !== undefined && funds.withdrawal(id) !== undefined
      ? id
      : fail('UNKNOWN_REFERENCE', `no withdrawal ${quoted(id)}`);
  };

  const simulator = (): SimulatedChain =>
    deps.simulator ?? fail('GENERAL_ERROR', 'the chains are real ones: there is no simulated chain to drive');

  /** Runs a simulated-chain operation, then waits until the engine has seen its effect. */
  const onChain = async (run: (chain: SimulatedChain) => Record<string, unknown>): Promise<ApiReply> => {
    const sim = simulator();
    let data: Record<string, unknown>;
    try {
      data = run(sim);
    } catch (error) {
      if (error instanceof ChainError) fail(error.result, error.message);
      throw error;
    }
    await deps.syncChains();
    return ok({ ...data, height: sim.height });
  };

  return [
    {
      /** user, coin, [chain]: the user's deposit address there, created on first call. */
      path: '/admin/addresses/create',
      handler: async (request) => {
        const userId = userOf(venue, request);
        const coin = coinOf(venue, request);
        const adapter = chainOf(request, coin.name);
        const chain = adapter.chain.name;
        // Checked before the adapter is asked, so that a refused call leaves the chain untouched too.
        if (!coin.canDeposit || !adapter.chain.canDeposit) {
          fail('DEPOSIT_DISABLED', `deposits of ${coin.name} on ${chain} are switched off`);
        }
        const known = funds.depositAddresses(userId, coin.name).find((a) => a.chain === chain);
        const address = known ?? (await adapter.depositAddress(userId));
        const r = await venue.submit({
          type: 'AssignDepositAddress',
          userId,
          coin: coin.name,
          chain,
          ...address,
        });
        return fromResult(r, {
          coin: coin.name,
          chain,
          ...address,
          key: joinAddress(address.address, address.memo),
        });
      },
    },
    {
      /** user, coin, address, [chain]: adds the address to the user's book, unverified. */
      path: '/admin/withdraw-addresses/add',
      handler: async (request) => {
        const userId = userOf(venue, request);
        const coin = coinOf(venue, request);
        const address = param(request, 'address') ?? '';
        const named = param(request, 'chain');
        const candidates = deps
          .chains()
          .filter(
            (a) => a.coin === coin.name && (named === undefined || a.chain.name === named.toUpperCase()),
          );
        const chain = candidates.find((a) => a.isAddress(address))?.chain;
        if (chain === undefined) {
          const names = candidates.map((a) => a.chain.name).join(' or ') || 'no such chain';
          fail('INVALID_PARAMETER', `${quoted(address)} is not a ${coin.name} address on ${names}`);
        }
        const r = await venue.submit({
          type: 'AddWithdrawAddress',
          userId,
          coin: coin.name,
          chain: chain.name,
          address,
        });
        return fromResult(r, {
          coin: coin.name,
          chain: chain.name,
          address,
          verified: false,
          duplicate: r.duplicate === true,
        });
      },
    },
    {
      /** user, coin, address: withdrawals may go to it from now on. */
      path: '/admin/withdraw-addresses/verify',
      handler: async (request) => {
        const userId = userOf(venue, request);
        const coin = coinOf(venue, request);
        const address = param(request, 'address') ?? '';
        const r = await venue.submit({ type: 'VerifyWithdrawAddress', userId, coin: coin.name, address });
        return fromResult(r, { coin: coin.name, address, verified: true, duplicate: r.duplicate === true });
      },
    },
    {
      /** user, password: sets (or resets, lifting a lock) the user's fund password. */
      path: '/admin/fund-password/set',
      handler: async (request) => {
        const userId = userOf(venue, request);
        const password = param(request, 'password') ?? '';
        if (!FUND_PASSWORD.test(password)) {
          fail(
            'INVALID_PARAMETER',
            `the fund password must be 6 to 64 printable ASCII characters (${password.length} given` +
              `${/^[\x20-\x7e]*$/.test(password) ? '' : ', some not printable ASCII'})`,
          );
        }
        return fromResult(
          await venue.submit({ type: 'SetFundPassword', userId, hash: await hashFundPassword(password) }),
        );
      },
    },
    {
      /**
       * [pending=1]: every withdrawal, or those in progress, with amounts as decimal text; filtered and
       * paged by activity-routes.ts's withdrawalsFilter ([user], [coin], [status], [from], [to],
       * [order=newest], [limit], [offset]).
       */
      path: '/admin/withdrawals/list',
      handler: (request) => {
        const pending = param(request, 'pending');
        if (pending !== undefined && pending !== '0' && pending !== '1') {
          fail('INVALID_PARAMETER', "pending must be '0' or '1'");
        }
        const filter = withdrawalsFilter(venue, request);
        const { rows, ...paged } = filter.arrange(funds.withdrawals(pending === '1').filter(filter.keep));
        const withdrawals = rows.map((w) => {
          const decimals = venue.engine.coin(w.coin)?.unitDecimal ?? 8;
          return {
            id: w.withdrawalId,
            user: venue.engine.userName(w.userId),
            coin: w.coin,
            chain: w.chain,
            amount: formatUnitsTrim(w.amount, decimals),
            fee: formatUnitsTrim(w.fee, decimals),
            address: w.address,
            state: w.state,
            txHash: w.txHash,
            confirmations: w.confirmations,
            itransfer: w.itransfer,
            reason: w.reason,
            submitTime: w.submitTime,
          };
        });
        return ok({ ...paged, withdrawals });
      },
    },
    {
      /** id: every step of one withdrawal, from history. */
      path: '/admin/withdrawals/show',
      handler: async (request) => {
        const id = withdrawalId(request);
        return ok({ steps: await venue.history.withdrawalSteps(id) });
      },
    },
    ...(['approve', 'reject'] as const).map((verb): Route => ({
      /** id: approve a submitted withdrawal, or reject (cancel) one not sent yet. */
      path: `/admin/withdrawals/${verb}`,
      handler: async (request) => {
        const id = withdrawalId(request);
        const r = await venue.submit(
          verb === 'approve'
            ? { type: 'ApproveWithdrawal', withdrawalId: id }
            : { type: 'CancelWithdrawal', withdrawalId: id },
        );
        // An approved withdrawal is sent by the chain watcher: answer with what it did.
        if (r.result === 'OK') await deps.syncChains();
        return fromResult(r, { id, state: funds.withdrawal(id)?.state, duplicate: r.duplicate === true });
      },
    })),
    {
      /** address (or `<account>_<memo>`), amount, [memo], [chain]: a deposit from outside to a watched address. */
      path: '/admin/chain/deposit',
      handler: (request) => {
        let address = param(request, 'address') ?? '';
        let memo = param(request, 'memo') ?? '';
        const sep = address.indexOf('_');
        if (memo === '' && sep > 0) [address, memo] = [address.slice(0, sep), address.slice(sep + 1)];
        const named = (param(request, 'chain') ?? '').toUpperCase();
        return onChain((sim) => {
          const targets = sim
            .watchedAddress(address, memo)
            .filter((t) => named === '' || t.chain.name === named);
          const target = targets[0];
          if (target === undefined || targets.length > 1) {
            const hint = memo === '' && sim.isMemoAccount(address) ? ': give the memo too' : '';
            throw new ChainError(
              'INVALID_PARAMETER',
              targets.length > 1
                ? `${address} is a deposit address on several chains: name one with chain`
                : `${joinAddress(address, memo) || "''"} is not a deposit address of this venue${named === '' ? '' : ` on ${named}`}${hint}`,
            );
          }
          const decimals = venue.engine.coin(target.coin)?.unitDecimal ?? 8;
          const text = param(request, 'amount') ?? '';
          const amount = parseDecimal(text, decimals);
          if (amount === undefined || amount <= 0) {
            throw new ChainError(
              'INVALID_AMOUNT',
              `amount ${quoted(text)} must be a positive decimal with at most ${decimals} decimals`,
            );
          }
          const tx = sim.deposit(target.coin, target.chain.name, address, memo, amount);
          return {
            hash: tx.hash,
            coin: target.coin,
            chain: target.chain.name,
            required: target.chain.confirmations,
          };
        });
      },
    },
    {
      /** [blocks] (default 1): mines blocks; pending transactions go into the first. */
      path: '/admin/chain/mine',
      handler: (request) => {
        const blocks = readInteger('blocks', paramText(request, 'blocks') ?? '1', 1, MAX_BLOCKS_PER_MINE);
        return onChain((sim) => ({ mined: blocks, height: sim.mine(blocks) }));
      },
    },
    {
      /** hash: fails a transaction that is not final yet. */
      path: '/admin/chain/fail',
      handler: (request) => {
        const hash = param(request, 'hash') ?? '';
        return onChain((sim) => ({ hash: sim.fail(hash).hash }));
      },
    },
  ];
}
