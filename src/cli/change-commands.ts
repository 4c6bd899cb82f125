/**
 * @module change-commands — the `bourse` commands that change the venue while it runs (issue 16,
 * "Change"): coins, markets, users and API keys. Each prints a table or a line for people, or with
 * --json the admin API's answer as one JSON object. The calls are those of
 * src/api/admin/change-routes.ts; each change is a journaled command.
 */
import type { CommandSpec, FlagSpec, FlagValues } from './commands.ts';
import { table } from './view-commands.ts';

type Row = Record<string, unknown>;

/** The flags these commands add to the CLI's registry (src/cli/commands.ts FLAGS). */
export const CHANGE_FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--unit-decimal': {
    value: '<n>',
    help: "decimals of the coin's smallest unit (0 to 15; fixed once added)",
  },
  '--en-name': { value: '<text>', help: 'the English name (default: the coin in capitals)' },
  '--cn-name': { value: '<text>', help: 'the Chinese name (default: the English name)' },
  '--show-name': { value: '<text>', help: 'the name shown (default: the English name)' },
  '--funds-type': { value: '<n>', help: "the interface's fundstype id (default: one above the highest)" },
  '--deposit': {
    value: 'on|off',
    help: 'deposits switched on or off (of the coin, or with --chain of that chain)',
  },
  '--withdraw': {
    value: 'on|off',
    help: 'withdrawals switched on or off (of the coin, or with --chain of that chain)',
  },
  '--add-chain': {
    value: '<spec>',
    repeat: true,
    help: 'a chain NAME:MAINCHAIN:confirmations:withdrawFee:minWithdraw[:memo], e.g. SOL:SOL:32:0.01:0.1',
  },
  '--daily-limit': { value: '<amount>', help: 'the most one user may withdraw per UTC day' },
  '--auto-approve': { value: '<amount>', help: 'withdrawals up to this are approved at once (0: all wait)' },
  '--withdraw-fee': { value: '<amount>', help: "the chain's withdrawal fee (with --chain)" },
  '--min-withdraw': { value: '<amount>', help: "the chain's smallest withdrawal (with --chain)" },
  '--confirmations': { value: '<n>', help: "the chain's confirmations (with --chain)" },
  '--price-scale': { value: '<n>', help: 'decimals of a price (fixed once added)' },
  '--amount-scale': { value: '<n>', help: 'decimals of an amount (fixed once added)' },
  '--min-amount': { value: '<amount>', help: 'the smallest order amount, in the base coin' },
  '--min-size': { value: '<amount>', help: 'the smallest order value (price × amount), in the quote coin' },
  '--maker-fee': {
    value: '<fraction>',
    help: 'e.g. 0.001 (0.1 %); negative: a rebate, at most the taker fee',
  },
  '--taker-fee': { value: '<fraction>', help: 'e.g. 0.002 (0.2 %), at most 0.1' },
  '--halted': { help: 'the new market starts halted (market resume opens it)' },
  '--user': { value: '<name>', help: "only this user's (keys, liquidations)" },
};

export const form = (flags: FlagValues, pairs: readonly (readonly [string, string])[]): [string, string][] =>
  pairs.flatMap(([flag, field]) => (flags.get(flag) ?? []).map((v): [string, string] => [field, v]));

const COIN_FIELDS = [
  ['--unit-decimal', 'unitDecimal'],
  ['--en-name', 'enName'],
  ['--cn-name', 'cnName'],
  ['--show-name', 'showName'],
  ['--funds-type', 'fundsType'],
  ['--add-chain', 'addChain'],
  ['--daily-limit', 'dailyWithdrawLimit'],
  ['--auto-approve', 'autoApproveLimit'],
] as const;
const CHAIN_FIELDS = [
  ['--chain', 'chain'],
  ['--withdraw-fee', 'withdrawFee'],
  ['--min-withdraw', 'minWithdraw'],
  ['--confirmations', 'confirmations'],
] as const;
const MARKET_FIELDS = [
  ['--price-scale', 'priceScale'],
  ['--amount-scale', 'amountScale'],
  ['--min-amount', 'minAmount'],
  ['--min-size', 'minSize'],
  ['--maker-fee', 'makerFee'],
  ['--taker-fee', 'takerFee'],
] as const;

/**
 * The admin API's form fields that a refusal may name, each with the flag a person gives it by:
 * the CLI says `--unit-decimal is required`, not `unitDecimal is required`.
 */
export const FIELD_FLAGS: ReadonlyMap<string, string> = new Map([
  ...[...COIN_FIELDS, ...CHAIN_FIELDS, ...MARKET_FIELDS].map(([flag, field]) => [field, flag] as const),
  ['replayProtection', '--replay-protection'],
]);

/** The on/off switches: of the coin, or (with --chain) of that chain. */
const switches = (flags: FlagValues): [string, string][] => {
  const chain = flags.has('--chain');
  return form(flags, [
    ['--deposit', chain ? 'chainDeposit' : 'canDeposit'],
    ['--withdraw', chain ? 'chainWithdraw' : 'canWithdraw'],
  ]);
};

function showCoin(b: Row): string {
  const chains = (b.chains as Row[] | undefined) ?? [];
  const head =
    `coin ${String(b.coin)} (${String(b.enName)}, ${String(b.unitDecimal)} decimals): ` +
    `deposits ${b.canDeposit === true ? 'on' : 'off'}, withdrawals ${b.canWithdraw === true ? 'on' : 'off'}` +
    (b.dailyWithdrawLimit === null
      ? ''
      : `, daily limit ${String(b.dailyWithdrawLimit)}, auto-approve up to ${String(b.autoApproveLimit)}`);
  if (chains.length === 0) return `${head}\nno chains: it moves only by operator credit`;
  return `${head}\n${table(chains, [
    ['chain', 'name'],
    ['network', 'mainChain'],
    ['memo', (r) => (r.memo === true ? 'yes' : 'no')],
    ['>confirmations', 'confirmations'],
    ['>withdraw fee', 'withdrawFee'],
    ['>min withdraw', 'minWithdraw'],
    ['deposit', (r) => (r.canDeposit === true ? 'on' : 'off')],
    ['withdraw', (r) => (r.canWithdraw === true ? 'on' : 'off')],
  ])}`;
}

function showMarket(b: Row): string {
  return table(
    [b],
    [
      ['market', 'market'],
      ['status', 'status'],
      ['>price scale', 'priceScale'],
      ['>amount scale', 'amountScale'],
      ['>min amount', 'minAmount'],
      ['>min size', 'minSize'],
      ['>maker fee', 'makerFee'],
      ['>taker fee', 'takerFee'],
    ],
  );
}

const KEY_COLUMNS: Parameters<typeof table>[1] = [
  ['access key', 'accessKey'],
  ['user', 'user'],
  ['permissions', (r) => (r.permissions as string[]).join(',') || 'none'],
  ['ips', (r) => (r.ips as string[]).join(',') || 'any'],
  ['strict', (r) => (r.replayProtection === true ? 'yes' : 'no')],
  ['opens', (r) => (r.opens === false ? 'NO: reissue' : r.opens === true ? 'yes' : '—')],
];

const keyLine = (b: Row): string =>
  `access key: ${String(b.accessKey)}\nsecret key: ${String(b.secretKey)}\n` +
  `permissions: ${(b.permissions as string[]).join(', ') || 'none'}; the secret is shown once: keep it`;

export const CHANGE_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'coin add',
    args: ['<coin>'],
    flags: [
      '--unit-decimal',
      '--en-name',
      '--cn-name',
      '--show-name',
      '--funds-type',
      '--deposit',
      '--withdraw',
      '--add-chain',
      '--daily-limit',
      '--auto-approve',
    ],
    summary: 'add a coin, with its chains, fees, minimums and limits',
    details:
      '--unit-decimal is required. Each --add-chain is NAME:MAINCHAIN:confirmations:withdrawFee:minWithdraw[:memo] ' +
      '(amounts in the coin); with a chain --daily-limit is required. A coin without chains moves only by operator credit. ' +
      'The chain watcher watches its chains at once. A coin that exists is refused: change it with coin change.',
    call: ([coin], flags) => ({
      path: '/admin/coins/add',
      form: [['coin', coin as string], ...form(flags, COIN_FIELDS), ...switches(flags)],
      show: showCoin,
    }),
  },
  {
    name: 'coin change',
    args: ['<coin>'],
    flags: [
      '--en-name',
      '--cn-name',
      '--show-name',
      '--deposit',
      '--withdraw',
      '--add-chain',
      '--daily-limit',
      '--auto-approve',
      '--chain',
      '--withdraw-fee',
      '--min-withdraw',
      '--confirmations',
    ],
    summary:
      "change a coin's names, switches, limits, or one chain's fee, minimum, confirmations and switches",
    details:
      '--deposit and --withdraw switch the coin, or with --chain that chain. --withdraw-fee, --min-withdraw and ' +
      '--confirmations need --chain. --add-chain adds a chain; a chain is never removed (switch it off). unitDecimal is fixed.',
    call: ([coin], flags) => {
      const fields = form(flags, [...COIN_FIELDS, ...CHAIN_FIELDS]).concat(switches(flags));
      if (fields.length === 0) return 'coin change needs something to change (see bourse coin change --help)';
      return { path: '/admin/coins/change', form: [['coin', coin as string], ...fields], show: showCoin };
    },
  },
  {
    name: 'market add',
    args: ['<market>'],
    flags: [
      '--price-scale',
      '--amount-scale',
      '--min-amount',
      '--min-size',
      '--maker-fee',
      '--taker-fee',
      '--halted',
    ],
    summary: 'add a market between two coins: scales, minimums, maker and taker fees',
    details:
      'The market is <base>_<quote>, both coins known. --price-scale, --amount-scale, --min-amount and --min-size are required; ' +
      'fees are fractions (default 0.002). A negative --maker-fee is a rebate paid out of fee income, at most the taker fee. ' +
      'It is listed and traded at once (public API, WebSocket) unless --halted.',
    call: ([market], flags) => ({
      path: '/admin/markets/add',
      form: [
        ['market', market as string],
        ...form(flags, MARKET_FIELDS),
        ...(flags.has('--halted') ? [['status', 'halted'] as [string, string]] : []),
      ],
      show: showMarket,
    }),
  },
  {
    name: 'market change',
    args: ['<market>'],
    flags: ['--min-amount', '--min-size', '--maker-fee', '--taker-fee'],
    summary: "change a market's minimums and fees",
    details:
      'Scales and coins are fixed. Resting orders keep their prices; new orders meet the new minimums.',
    call: ([market], flags) => {
      const fields = form(flags, MARKET_FIELDS);
      if (fields.length === 0)
        return 'market change needs --min-amount, --min-size, --maker-fee or --taker-fee';
      return {
        path: '/admin/markets/change',
        form: [['market', market as string], ...fields],
        show: showMarket,
      };
    },
  },
  {
    name: 'market close',
    args: ['<market>'],
    flags: [],
    summary: 'close a market for good: its orders cancelled, their funds released',
    details:
      'Every resting order is cancelled (reason operator) and its frozen funds released; the market stays listed as closed ' +
      'and refuses orders. A closed market cannot be resumed or changed.',
    call: ([market]) => ({
      path: '/admin/markets/close',
      form: [['market', market as string]],
      show: (b) => `market ${String(b.market)} closed: ${String(b.cancelled)} orders cancelled`,
    }),
  },
  ...(['freeze', 'unfreeze'] as const).map((verb): CommandSpec => ({
    name: `user ${verb}`,
    args: ['<name>'],
    flags: [],
    summary:
      verb === 'freeze' ? 'freeze a user: no orders, no withdrawals (reads still work)' : 'unfreeze a user',
    details:
      verb === 'freeze'
        ? "The user's orders and withdrawals are refused with code 4001; balances, orders and records can still be read, " +
          'and resting orders cancelled. Resting orders stay: cancel them with user cancel-orders.'
        : 'Orders and withdrawals are accepted again.',
    call: ([name]) => ({
      path: `/admin/users/${verb}`,
      form: [['user', name as string]],
      show: (b) => `user ${String(b.user)}: ${String(b.status)}`,
    }),
  })),
  {
    name: 'user cancel-orders',
    args: ['<name>', '[market]'],
    flags: [],
    summary: "cancel a user's resting orders (in one market, or all)",
    details: 'Each order is cancelled with reason operator and its frozen funds released.',
    call: ([name, market]) => ({
      path: '/admin/users/cancel-orders',
      form: [
        ['user', name as string],
        ...(market === undefined ? [] : [['market', market] as [string, string]]),
      ],
      show: (b) =>
        `user ${String(b.user)}: ${String(b.cancelled)} orders cancelled${b.market === null ? '' : ` in ${String(b.market)}`}`,
    }),
  },
  {
    name: 'user withdraw-limit',
    args: ['<name>', '<coin>', '<amount|none>'],
    flags: [],
    summary: "set (or with none clear) a user's own daily withdrawal limit of a coin",
    details:
      "The user's limit replaces the coin's daily limit for that user (lower or higher) per UTC day; none returns to the coin's.",
    call: ([name, coin, limit]) => ({
      path: '/admin/users/withdraw-limit',
      form: [
        ['user', name as string],
        ['coin', coin as string],
        limit === 'none' ? ['clear', 'true'] : ['limit', limit as string],
      ],
      show: (b) =>
        b.limit === null
          ? `user ${String(b.user)}: the ${String(b.coin)} daily limit is the coin's (${String(b.coinLimit)})`
          : `user ${String(b.user)}: at most ${String(b.limit)} ${String(b.coin)} per UTC day`,
    }),
  },
  {
    name: 'key list',
    args: [],
    flags: ['--user', '--limit', '--offset'],
    summary: 'API keys: user, permissions, bound IPs, strict mode, whether the master key opens them',
    details:
      'Never a secret. A key the current master key cannot open (opens: NO) must be reissued: bourse key reissue.',
    call: (_args, flags) => ({
      path: '/admin/keys/list',
      form: form(flags, [
        ['--user', 'user'],
        ['--limit', 'limit'],
        ['--offset', 'offset'],
      ]),
      show: (b) => {
        const keys = b.keys as Row[];
        return keys.length === 0
          ? 'no keys'
          : `${table(keys, KEY_COLUMNS)}\nkeys ${Number(b.offset) + 1}–${Number(b.offset) + keys.length} of ${String(b.total)}`;
      },
    }),
  },
  {
    name: 'key revoke',
    args: ['<access-key>'],
    flags: [],
    summary: 'delete an API key: requests signed with it fail from now on',
    details: 'The key cannot be brought back; create a new one with key create.',
    call: ([key]) => ({
      path: '/admin/keys/revoke',
      form: [['key', key as string]],
      show: (b) => `key ${String(b.accessKey)} of ${String(b.user)} revoked`,
    }),
  },
  {
    name: 'key rotate',
    args: ['<access-key>'],
    flags: [],
    summary: 'give an API key a new secret (same access key, permissions and IPs)',
    details:
      'The old secret stops at once. The new one is printed once and never stored by the server: keep it.',
    call: ([key]) => ({ path: '/admin/keys/rotate', form: [['key', key as string]], show: keyLine }),
  },
  {
    name: 'key reissue',
    args: [],
    flags: ['--user'],
    summary: 'new secrets for the keys the current master key cannot open (after a master-key change)',
    details:
      'Keys sealed under a master key that is lost cannot sign: each gets a new secret, printed once, with the same ' +
      'access key, permissions and IPs. Keys the master key opens are left alone.',
    call: (_args, flags) => ({
      path: '/admin/keys/reissue',
      form: form(flags, [['--user', 'user']]),
      show: (b) => {
        const rows = b.reissued as Row[];
        if (rows.length === 0)
          return `all ${String(b.checked)} keys open with the current master key: none reissued`;
        return `${table(rows, [
          ['access key', 'accessKey'],
          ['user', 'user'],
          ['secret key (shown once)', 'secretKey'],
        ])}\n${rows.length} keys reissued`;
      },
    }),
  },
];
