/**
 * @module risk-commands — the `bourse` commands of the risk side (issue 15): `liquidations` (the
 * records, or one in full) and `insurance` (the fund per coin). Each prints a table or lines for
 * people, or with --json the admin API's answer as one JSON object. The calls are those of
 * src/api/admin/risk-routes.ts.
 */
import { form } from './change-commands.ts';
import type { CommandSpec, FlagSpec } from './commands.ts';
import { listed, table, when } from './view-commands.ts';

type Row = Record<string, unknown>;

/** The flags these commands add to the CLI's registry (src/cli/commands.ts FLAGS). */
export const RISK_FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--market': { value: '<market>', help: "only this market's, e.g. btc_usdt" },
  '--status': {
    value: '<status>',
    help: 'only those in this state (liquidations: running or done; deposits: confirming, credited or failed)',
  },
};

/** `0.1297 btc` per coin with a non-zero amount of `field`, or '0'. */
const perCoin = (coins: readonly Row[], field: string): string => {
  const parts = coins
    .filter((c) => !/^0(\.0*)?$/.test(String(c[field])))
    .map((c) => `${String(c[field])} ${String(c.coin)}`);
  return parts.length === 0 ? '0' : parts.join(' + ');
};

const account = (r: Row): string =>
  r.acctType === 2 ? `${String(r.user)} cross` : `${String(r.user)} isolated ${String(r.marketName)}`;

/** One record in full: who, when, at what mark and risk rate, its orders, and per coin the outcome. */
function showLiquidation(r: Row): string {
  const orders = r.orders as Row[];
  const coins = r.coins as Row[];
  return [
    `liquidation ${String(r.id)} of ${account(r)} (user id ${String(r.userId)}): ${String(r.status)}`,
    `began ${when(r.startTime)} at mark ${String(r.markPrice)}, risk rate ${String(r.riskRate)}` +
      (r.status === 'done' ? `; ended ${when(r.endTime)}` : '; the account is locked (repayLock)'),
    '',
    `orders (${orders.length}):`,
    orders.length === 0
      ? '  (none: no liquidity inside the band yet)'
      : table(orders, [
          ['time', (o) => when(o.time)],
          ['side', 'side'],
          ['>limit', 'price'],
          ['>amount', 'amount'],
          ['>filled', 'filled'],
        ]),
    '',
    table(coins, [
      ['coin', 'coin'],
      ['>repaid', 'repaid'],
      ['>shortfall', 'shortfall'],
      ['>insurance', 'insurance'],
      ['>bad debt', 'badDebt'],
      ['>fee', 'fee'],
    ]),
  ].join('\n');
}

/** The flags that filter and page the list (not taken with an id). */
const LIST_FLAGS = ['--user', '--market', '--status', '--limit', '--offset'];

export const RISK_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'liquidations',
    args: ['[id]'],
    flags: LIST_FLAGS,
    summary: 'forced liquidations: account, mark and risk rate, repaid, shortfall, fee; one in full',
    details:
      'Newest first. With an id, that liquidation in full: its orders (limit at the price band, amount, filled) and per coin what ' +
      'the account repaid, the shortfall, what the insurance fund paid, the bad debt written off against the lenders and the fee. ' +
      '--user (name or id), --market and --status filter the list; --limit (1 to 1000) and --offset page it.',
    call: ([id], flags) =>
      id === undefined
        ? {
            path: '/admin/liquidations/list',
            form: form(flags, [
              ['--user', 'user'],
              ['--market', 'market'],
              ['--status', 'status'],
              ['--limit', 'limit'],
              ['--offset', 'offset'],
            ]),
            show: (b) =>
              listed(b, 'liquidations', 'liquidations', [
                ['>id', 'id'],
                ['began', (r) => when(r.startTime)],
                ['account', account],
                ['status', 'status'],
                ['>mark', 'markPrice'],
                ['>risk rate', 'riskRate'],
                ['repaid', (r) => perCoin(r.coins as Row[], 'repaid')],
                ['shortfall', (r) => perCoin(r.coins as Row[], 'shortfall')],
                ['fee', (r) => perCoin(r.coins as Row[], 'fee')],
              ]),
          }
        : LIST_FLAGS.some((f) => flags.has(f))
          ? 'liquidations <id> shows one liquidation: --user, --market, --status, --limit and --offset filter the list (without an id)'
          : {
              path: '/admin/liquidations/show',
              form: [['id', id]],
              show: (b) => showLiquidation(b.liquidation as Row),
            },
  },
  {
    name: 'insurance',
    args: ['[coin]'],
    flags: [],
    summary: 'the insurance fund per coin: balance, interest share and fees in, shortfalls paid, bad debt',
    details:
      "The fund's balance is what it received (the venue's share of interest, liquidation fees) less what it paid (shortfalls " +
      'covered). Bad debt is what a liquidation left beyond the fund, written off against the lenders pro rata (docs/margin.md).',
    call: ([coin]) => ({
      path: '/admin/insurance',
      form: coin === undefined ? [] : [['coin', coin]],
      show: (b) =>
        [
          `liquidations: ${String(b.liquidations)} (${String(b.running)} running)`,
          table(b.coins as Row[], [
            ['coin', 'coin'],
            ['>balance', 'available'],
            ['>interest share', 'interestShare'],
            ['>liquidation fees', 'liquidationFees'],
            ['>shortfalls paid', 'covered'],
            ['>bad debt', 'badDebt'],
          ]),
        ].join('\n'),
    }),
  },
];
