/**
 * @module commands — the `bourse` CLI's commands: for each, its arguments, flags and help, and the
 * admin API call it makes (or the offline tool it runs). bourse.ts parses, checks and dispatches.
 */
import { ROLES, roleSummary } from '../config/role-usage.ts';
import { KEY_PERMISSION_HELP } from '../domain/commands.ts';
import { CHANGE_COMMANDS, CHANGE_FLAGS } from './change-commands.ts';
import { ACTIVITY_COMMANDS, ACTIVITY_FLAGS } from './activity-commands.ts';
import { OPERATOR_COMMANDS, OPERATOR_FLAGS } from './operator-commands.ts';
import { RISK_COMMANDS, RISK_FLAGS } from './risk-commands.ts';
import { SANDBOX_COMMANDS } from './sandbox-commands.ts';
import { VIEW_COMMANDS } from './view-commands.ts';

/** A flag's value placeholder (absent: a switch) and help line. */
export interface FlagSpec {
  readonly value?: string;
  readonly help: string;
  /** May be given several times (each value kept). */
  readonly repeat?: boolean;
}

/** Every flag the CLI knows. The four last ones are common to all commands. */
export const FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--perms': { value: '<list>', help: `required: a comma list of ${KEY_PERMISSION_HELP}` },
  '--ip': { value: '<address>', repeat: true, help: 'bind the key to this client IP (repeat: up to 20)' },
  '--replay-protection': {
    help: 'strict mode: every signed request must sign a fresh nonce (its time in ms) and is accepted once',
  },
  '--ref': { value: '<id>', help: 'a reference: a second credit with it changes nothing (default: new)' },
  '--chain': { value: '<chain>', help: "the chain, e.g. ERC20 or TRC20 (default: the coin's first)" },
  '--memo': { value: '<memo>', help: 'the memo, on memo chains' },
  '--pending': { help: 'only the withdrawals in progress' },
  '--search': {
    value: '<text>',
    help: 'only users whose name contains the text (any letter case) or whose id it is',
  },
  '--limit': { value: '<n>', help: 'at most n rows (1 to 1000)' },
  '--offset': { value: '<n>', help: 'skip the first n rows' },
  ...CHANGE_FLAGS,
  ...RISK_FLAGS,
  ...OPERATOR_FLAGS,
  ...ACTIVITY_FLAGS,
  '--history-url': {
    value: '<postgres-url>',
    help: 'the history store on PostgreSQL, postgres://user@host:port/db[?schema=name] (default: $BOURSE_HISTORY_URL, else SQLite in the data directory)',
  },
  '--to': {
    value: '<file|nats-url>',
    help: 'required: where the journal goes, file (the data directory) or nats://host:4222[?stream=NAME&monitor=…]',
  },
  '--from': {
    value: '<nats-url>',
    help: 'the stream the journal is on (default: the one the data directory records)',
  },
  '--data': {
    value: '<dir>',
    help: "the server's data directory (default: $BOURSE_DATA, else ./data)",
  },
  '--url': {
    value: '<url>',
    help: 'the admin API, http://host:port or unix:<socket>, instead of the one in <data>/listen.json',
  },
  '--rate': { value: '<daily %>', help: 'the daily interest rate in percent, e.g. 0.05 (0.05 to 0.2)' },
  '--days': { value: '<n>', help: 'the term of the loans: 10, 20 or 30 days' },
  '--json': { help: 'machine-readable output (one JSON object)' },
  '--help': { help: 'this help' },
};

/** Flags every online command takes (offline ones take all but --url). */
export const COMMON_FLAGS = ['--data', '--url', '--json', '--help'] as const;

/** The environment variables the CLI reads. */
export const ENVIRONMENT: readonly (readonly [string, string])[] = [
  ['BOURSE_DATA', 'the data directory when --data is not given'],
  ['BOURSE_HISTORY_URL', 'rebuild-history: the PostgreSQL history store when --history-url is not given'],
  [
    'BOURSE_PORT',
    'the public port the server was started with: checked against listen.json, named when no server is found (the token is never sent to it)',
  ],
];

/** One admin API call: the path, the form, and how a success is shown to a person. */
export interface AdminCall {
  readonly path: string;
  readonly form: readonly (readonly [string, string])[];
  readonly show: (body: Record<string, unknown>) => string;
}

/** The values of the flags given, by name. */
export type FlagValues = ReadonlyMap<string, readonly string[]>;

export interface CommandSpec {
  /** The words that name it, e.g. `key create`. */
  readonly name: string;
  /** Positional arguments: `<x>` required, `[x]` optional. */
  readonly args: readonly string[];
  /** Its own flags (the common ones are added). */
  readonly flags: readonly string[];
  /** One line for the overview. */
  readonly summary: string;
  /** More lines for `bourse <command> --help`. */
  readonly details: string;
  /** A refusal for extra arguments, instead of the generic one. */
  readonly extraArgs?: string;
  /** Flags this command reads otherwise than FLAGS says (`report`'s --from and --to): optional, its own help. */
  readonly ownFlagSpecs?: Readonly<Record<string, FlagSpec>>;
  /** A secret read from the terminal or standard input, never from the command line. */
  readonly secret?: { readonly field: string; readonly prompt: (args: readonly string[]) => string };
  /** The call, or a usage problem (a string). Absent for offline commands. */
  readonly call?: (args: readonly string[], flags: FlagValues) => AdminCall | string;
}

const first = (flags: FlagValues, name: string): string | undefined => flags.get(name)?.[0];
const optional = (flags: FlagValues, flag: string, field: string): [string, string][] => {
  const value = first(flags, flag);
  return value === undefined ? [] : [[field, value]];
};

/** Withdrawals as lines: id, user, amount and fee, chain, address, state, transaction. */
function listWithdrawals(rows: readonly Record<string, unknown>[]): string {
  if (rows.length === 0) return 'no withdrawals';
  return rows
    .map((w) => {
      const tx = w.txHash === '' ? '' : ` tx ${String(w.txHash)} (${String(w.confirmations)} conf.)`;
      const why = w.reason === '' ? '' : ` — ${String(w.reason)}`;
      return (
        `#${String(w.id)} ${String(w.user)}: ${String(w.amount)} ${String(w.coin)} (fee ${String(w.fee)}) ` +
        `on ${String(w.chain)} to ${String(w.address)}${w.itransfer === true ? ' [internal]' : ''}: ` +
        `${String(w.state)}${tx}${why}`
      );
    })
    .join('\n');
}

/** A withdrawal's steps as lines: time, state, confirmations, transaction. */
function listSteps(rows: readonly Record<string, unknown>[]): string {
  if (rows.length === 0) return 'no steps recorded (yet)';
  return rows
    .map(
      (x) =>
        `${new Date(x.time as number).toISOString()} ${String(x.status)}` +
        (x.txHash === '' ? '' : ` tx ${String(x.txHash)} (${String(x.confirmations)} conf.)`) +
        (x.reason === '' ? '' : ` — ${String(x.reason)}`),
    )
    .join('\n');
}

const withdrawal = (verb: 'approve' | 'reject' | 'show', summary: string, details: string): CommandSpec => ({
  name: `withdraw ${verb}`,
  args: ['<id>'],
  flags: [],
  summary,
  details,
  call: ([id]) => ({
    path: `/admin/withdrawals/${verb}`,
    form: [['id', id as string]],
    show: (b) =>
      verb === 'show'
        ? listSteps(b.steps as Record<string, unknown>[])
        : `withdrawal ${id}: ${String(b.state)}${b.duplicate === true ? ' (already)' : ''}`,
  }),
});

const marketStatus = (verb: 'halt' | 'resume'): CommandSpec => ({
  name: `market ${verb}`,
  args: ['<market>'],
  flags: [],
  summary: verb === 'halt' ? 'stop trading in a market' : 'restart trading in a halted market',
  details:
    verb === 'halt'
      ? 'New orders in the market are refused (1009) until `market resume`; resting orders stay and can be cancelled.'
      : 'Orders are accepted again in the market.',
  call: ([market]) => ({
    path: '/admin/markets/status',
    form: [
      ['market', market as string],
      ['status', verb === 'halt' ? 'halted' : 'trading'],
    ],
    show: () => `market ${market} ${verb === 'halt' ? 'halted' : 'trading'}`,
  }),
});

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'user create',
    args: ['<name>'],
    flags: [],
    summary: 'register a user',
    details:
      'A name is 1 to 32 letters, digits, or . _ @ -, unique regardless of letter case. The user has no key and no money yet.',
    call: ([name]) => ({
      path: '/admin/users/create',
      form: [['name', name as string]],
      show: (b) => `user ${name} created with id ${String(b.userId)}`,
    }),
  },
  {
    name: 'key create',
    args: ['<name>'],
    flags: ['--perms', '--ip', '--replay-protection'],
    summary: 'create an API key for a user',
    details:
      `The permissions are never defaulted: --perms names them (e.g. --perms asset,entrust for a trading bot).\n` +
      'With --replay-protection a captured request cannot be sent again (docs/api-keys.md, "Replays"); ' +
      'clients must then sign a parameter nonce with the current time in ms on every request.\n' +
      'The secret is printed once and never stored by the server: keep it.',
    call: ([name], flags) => {
      const perms = first(flags, '--perms');
      if (perms === undefined) {
        return `key create needs --perms: a comma list of ${KEY_PERMISSION_HELP} (e.g. --perms asset,entrust)`;
      }
      return {
        path: '/admin/keys/create',
        form: [
          ['user', name as string],
          ['perms', perms],
          ...(flags.get('--ip') ?? []).map((ip): [string, string] => ['ip', ip]),
          ...(flags.has('--replay-protection') ? [['replayProtection', 'true'] as [string, string]] : []),
        ],
        show: (b) =>
          `access key: ${String(b.accessKey)}\nsecret key: ${String(b.secretKey)}\n` +
          `permissions: ${(b.permissions as string[]).join(', ')}` +
          `${(b.ips as string[]).length === 0 ? '' : `\nbound to: ${(b.ips as string[]).join(', ')}`}\n` +
          (b.replayProtection === true
            ? 'replay protection: every request must sign a fresh nonce (the time in ms) and is accepted once\n'
            : '') +
          '(the secret is shown only now)',
      };
    },
  },
  {
    name: 'deposit credit',
    args: ['<name>', '<coin>', '<amount>'],
    flags: ['--ref'],
    summary: 'credit a user (an operator deposit)',
    details:
      "The amount is a decimal with at most the coin's decimals. Give --ref to make a retry safe: a credit with a reference already applied changes nothing.",
    call: ([name, coin, amount], flags) => ({
      path: '/admin/deposits/credit',
      form: [
        ['user', name as string],
        ['coin', (coin as string).toLowerCase()],
        ['amount', amount as string],
        ...optional(flags, '--ref', 'ref'),
      ],
      show: (b) =>
        b.duplicate === true
          ? `deposit ${String(b.depositId)} was already applied: nothing changed`
          : `credited ${amount} ${coin} to ${name} (${String(b.depositId)})`,
    }),
  },
  {
    name: 'address create',
    args: ['<name>', '<coin>'],
    flags: ['--chain'],
    summary: "the user's deposit address (and memo) on a chain",
    details: 'Created on the first call, the same one afterwards.',
    call: ([name, coin], flags) => ({
      path: '/admin/addresses/create',
      form: [['user', name as string], ['coin', coin as string], ...optional(flags, '--chain', 'chain')],
      show: (b) =>
        `${name}'s ${String(b.coin)} deposit address on ${String(b.chain)}: ${String(b.address)}` +
        (b.memo === '' ? '' : `\nmemo: ${String(b.memo)}  (deposits go to ${String(b.key)})`),
    }),
  },
  ...(['add', 'verify'] as const).map((verb): CommandSpec => ({
    name: `withdraw-address ${verb}`,
    args: ['<name>', '<coin>', '<address>'],
    flags: verb === 'add' ? ['--chain'] : [],
    summary:
      verb === 'add'
        ? "add a withdrawal address to the user's book (<account>_<memo> on memo chains)"
        : 'verify a withdrawal address: withdrawals may go to it',
    details:
      verb === 'add'
        ? 'The address starts unverified: withdrawals to it are refused until `withdraw-address verify`.'
        : 'The address must be in the book already (`withdraw-address add`).',
    call: ([name, coin, address], flags) => ({
      path: `/admin/withdraw-addresses/${verb}`,
      form: [
        ['user', name as string],
        ['coin', coin as string],
        ['address', address as string],
        ...optional(flags, '--chain', 'chain'),
      ],
      show: (b) =>
        verb === 'add'
          ? `${b.duplicate === true ? 'already in' : 'added to'} ${name}'s withdrawal book: ${address} (${String(b.coin)} on ${String(b.chain)}); verify it with: bourse withdraw-address verify ${name} ${String(b.coin)} ${address}`
          : `${address} is ${b.duplicate === true ? 'already ' : ''}verified: ${name} may withdraw ${String(b.coin)} to it`,
    }),
  })),
  {
    name: 'fund-password set',
    args: ['<name>'],
    flags: [],
    summary: "set or reset the user's fund password (lifts a lock)",
    details:
      'The password is read from the terminal without echo (typed twice), or from the first line of standard input\n' +
      '(e.g. `printf \'%s\\n\' "$PW" | bourse fund-password set alice`): never from the command line, where ps and\n' +
      'the shell history would show it. 6 to 64 printable ASCII characters.',
    extraArgs:
      'fund-password set takes no password on the command line (ps and the shell history would show it): type it at the prompt, or give it on standard input',
    secret: { field: 'password', prompt: ([name]) => `fund password for ${name}` },
    call: ([name]) => ({
      path: '/admin/fund-password/set',
      form: [['user', name as string]],
      show: () => `fund password of ${name} set`,
    }),
  },
  {
    name: 'withdraw list',
    args: [],
    flags: ['--pending'],
    summary: 'withdrawals, oldest first',
    details: 'Each with its id, user, amount and fee, chain, address, state and transaction.',
    call: (_args, flags) => ({
      path: '/admin/withdrawals/list',
      form: flags.has('--pending') ? [['pending', '1']] : [],
      show: (b) => listWithdrawals(b.withdrawals as Record<string, unknown>[]),
    }),
  },
  withdrawal('approve', 'approve a withdrawal waiting for the operator', 'The chain watcher then sends it.'),
  withdrawal('reject', 'reject (cancel) a withdrawal not sent yet', 'The frozen amount returns to the user.'),
  withdrawal('show', 'every step of one withdrawal', 'From the history store: time, state, confirmations.'),
  {
    name: 'chain deposit',
    args: ['<address>', '<amount>'],
    flags: ['--memo', '--chain'],
    summary: 'simulated chain: pay a deposit address; prints the hash',
    details: 'The deposit is credited once the chain has mined its confirmations (`chain mine`).',
    call: ([address, amount], flags) => ({
      path: '/admin/chain/deposit',
      form: [
        ['address', address as string],
        ['amount', amount as string],
        ...optional(flags, '--memo', 'memo'),
        ...optional(flags, '--chain', 'chain'),
      ],
      show: (b) =>
        `${String(b.hash)}\n(${amount} ${String(b.coin)} on ${String(b.chain)}, pending: it is credited at ${String(b.required)} confirmations)`,
    }),
  },
  {
    name: 'chain mine',
    args: ['[n]'],
    flags: [],
    summary: 'simulated chain: mine n blocks (default 1, at most 10000)',
    details: 'Pending transactions go into the first block.',
    call: ([blocks]) => ({
      path: '/admin/chain/mine',
      form: [['blocks', blocks ?? '1']],
      show: (b) => `mined ${String(b.mined)} block(s): height ${String(b.height)}`,
    }),
  },
  {
    name: 'chain fail',
    args: ['<hash>'],
    flags: [],
    summary: 'simulated chain: fail a transaction not final yet',
    details: 'A failed deposit is never credited; a failed withdrawal returns its amount to the user.',
    call: ([hash]) => ({
      path: '/admin/chain/fail',
      form: [['hash', hash as string]],
      show: () => `transaction ${hash} failed`,
    }),
  },
  marketStatus('halt'),
  marketStatus('resume'),
  {
    name: 'lending fund',
    args: ['<coin>', '<amount>'],
    flags: ['--rate', '--days', '--ref'],
    summary: 'fund the platform lending pool, the default lender of margin borrowing',
    details:
      'Credits the pool with the amount and offers it at once at the daily rate for the term, rolling over\n' +
      '(what borrowers repay is lent again). Journaled and audited. --rate and --days are required.\n' +
      'Give --ref to make a retry safe: a funding with a reference already applied changes nothing.',
    call: ([coin, amount], flags) => {
      const rate = first(flags, '--rate');
      const days = first(flags, '--days');
      if (rate === undefined || days === undefined) {
        return 'lending fund needs --rate <daily %> and --days <10|20|30>, e.g. bourse lending fund usdt 100000 --rate 0.05 --days 10';
      }
      return {
        path: '/admin/lending/fund',
        form: [
          ['coin', (coin as string).toLowerCase()],
          ['amount', amount as string],
          ['rate', rate],
          ['days', days],
          ...optional(flags, '--ref', 'ref'),
        ],
        show: (b) =>
          b.duplicate === true
            ? `funding ${String(b.fundingId)} was already applied: nothing changed`
            : `lending pool funded with ${String(b.amount)} ${String(b.coin)}, offered at ${String(b.rate)} % a day for ${String(b.days)} days (${String(b.fundingId)})`,
      };
    },
  },
  {
    name: 'demo status',
    args: [],
    flags: [],
    summary: 'the demo market: running or stopped, its users, the faucet',
    details:
      'The demo runs on a fresh data directory when the operator asks (--demo or --sandbox), or unasked on the README venue: npm start on loopback with the default ./data (docs/sandbox.md).',
    call: () => ({
      path: '/admin/demo/status',
      form: [],
      show: (b) =>
        b.started !== true
          ? 'no demo market on this venue'
          : `demo market ${b.stopped === true ? 'stopped for good' : 'running'}; users: ` +
            `${(b.users as string[]).join(', ')}; faucet per hour: ` +
            (b.faucet as { coin: string; perHour: string }[]).map((a) => `${a.perHour} ${a.coin}`).join(', '),
    }),
  },
  {
    name: 'demo stop',
    args: [],
    flags: [],
    summary: "stop the demo's bots for good (their users stay)",
    details:
      'Journals the stop: the bots stop now and a restart does not bring them back. Their users stay, marked as demo users, with their balances and orders.',
    call: () => ({
      path: '/admin/demo/stop',
      form: [],
      show: (b) =>
        b.duplicate === true
          ? 'the demo was stopped already'
          : 'demo stopped for good: the bots stop now and a restart does not bring them back; their users stay, marked as demo',
    }),
  },
  {
    name: 'faucet',
    args: ['<name>', '<coin>', '<amount>'],
    flags: [],
    summary: 'credit a demo user from the faucet (within its hourly allowance)',
    details:
      "Demo users only; the amount is a decimal with at most the coin's decimals; each coin has an allowance per user and UTC hour (bourse demo status).",
    call: ([name, coin, amount]) => ({
      path: '/admin/demo/faucet',
      form: [
        ['user', name as string],
        ['coin', coin as string],
        ['amount', amount as string],
      ],
      show: (b) =>
        `credited ${amount} ${String(coin)} to ${String(name)} from the faucet: ${String(b.available)} available`,
    }),
  },
  {
    name: 'clock',
    args: [],
    flags: [],
    summary: "the venue's clock: real, manual or speed, and its time",
    details:
      'Under --clock=manual the time moves only with `bourse clock advance`; under --clock=speed:<n> it runs n times real time (`bourse clock speed`).',
    call: () => ({
      path: '/admin/clock',
      form: [],
      show: (b) =>
        `${String(b.iso)} (${String(b.mode)} clock${b.speed === undefined ? '' : `, ${String(b.speed)} times real time`})`,
    }),
  },
  {
    name: 'clock advance',
    args: ['<duration>'],
    flags: [],
    summary: 'move a manual clock forward (30s, 15m, 1h, 1h30m, 2d, 1w)',
    details:
      'Each timer on the way (a dead-man switch) fires at its own time; the new time is journaled. Units ms s m h d w; at most 366 days. Refused on the wall clock.',
    call: ([by]) => ({
      path: '/admin/clock/advance',
      form: [['by', by as string]],
      show: (b) =>
        `${String(b.iso)} (manual clock), advanced from ${new Date(b.from as number).toISOString()}`,
    }),
  },
  {
    name: 'clock speed',
    args: ['<n>'],
    flags: [],
    summary: "change a speed clock's speed: venue time runs n times real time (0.001 to 1000000)",
    details:
      'From now on; the time of the change is journaled. Only on a sandbox started with --clock=speed:<n>; a restart runs at the speed of --clock again.',
    call: ([speed]) => ({
      path: '/admin/clock/speed',
      form: [['speed', speed as string]],
      show: (b) => `${String(b.iso)}: ${String(b.speed)} times real time (was ${String(b.from)})`,
    }),
  },
  {
    name: 'replay',
    args: [],
    flags: [],
    summary: "a sandbox's replays of history: their files, markets and how far each got",
    details:
      'The journal’s replays (StartReplay), each with its files’ SHA-256, and played/total while it plays.',
    call: () => ({
      path: '/admin/replay',
      form: [],
      show: (b) =>
        (b.replays as Record<string, unknown>[])
          .map(
            (r) =>
              `replay ${String(r.replayId)}: ${(r.sources as { file: string; market: string }[]).map((s) => `${s.file} (${s.market})`).join(', ')}` +
              (r.ended !== undefined
                ? `, ${(r.ended as { reason: string }).reason}`
                : r.played !== undefined
                  ? `, ${String(r.played)} of ${String(r.total)} trades played`
                  : ', playing'),
          )
          .join('\n') || 'no replay',
    }),
  },
  {
    name: 'replay start',
    args: ['<files>'],
    flags: [],
    summary:
      'replay historical data on a running sandbox (files on the server: <file> or <market>=<file>, comma-separated)',
    details:
      'Binance kline or aggTrades CSV, ccxt OHLCV or trades JSON (docs/sandbox.md, "Replay"). A malformed file is refused naming its line and column, and nothing is journaled.',
    call: ([files]) => ({
      path: '/admin/replay/start',
      form: [['files', files as string]],
      show: (b) => `replay ${String((b.replay as { replayId: number }).replayId)} playing`,
    }),
  },
  {
    name: 'replay stop',
    args: ['<id>'],
    flags: [],
    summary: 'end a replay for good (EndReplay): its makers’ and taker’s orders stay, nothing more is played',
    details: 'A restart does not resume an ended replay.',
    call: ([id]) => ({
      path: '/admin/replay/stop',
      form: [['replay', id as string]],
      show: (b) => `replay ${String((b.replay as { replayId: number }).replayId)} stopped`,
    }),
  },
  {
    name: 'snapshot',
    args: [],
    flags: [],
    summary: 'write a snapshot now',
    details: 'Prints the snapshot file.',
    call: () => ({ path: '/admin/snapshot', form: [], show: (b) => `snapshot written: ${String(b.path)}` }),
  },
  {
    name: 'state',
    args: [],
    flags: [],
    summary: 'the journal position and state hash',
    details: 'Two servers replaying the same journal show the same hash at the same position.',
    call: () => ({
      path: '/admin/state',
      form: [],
      show: (b) => `seq ${String(b.lastSeq)}, state hash ${String(b.stateHash)}`,
    }),
  },
  ...VIEW_COMMANDS,
  ...CHANGE_COMMANDS,
  ...RISK_COMMANDS,
  ...ACTIVITY_COMMANDS,
  ...OPERATOR_COMMANDS,
  ...SANDBOX_COMMANDS,
  {
    name: 'verify',
    args: [],
    flags: [],
    summary: 'check journal and snapshots, replay from scratch (server stopped)',
    details:
      'Checks every journal segment and snapshot, then replays the journal from genesis and compares the state hash with each snapshot.',
  },
  {
    name: 'journal copy',
    args: [],
    flags: ['--to', '--from'],
    summary: 'move the journal between the data directory and a JetStream stream (server stopped)',
    details:
      'Copies every record into an empty destination, replays both journals from genesis and compares their state hashes and records, then records the destination in the data directory (journal.json): start the server with --journal-url <nats-url> after --to <nats-url>, without it after --to file. An old file journal is moved aside, never appended to (docs/scale-out.md).',
  },
  {
    name: 'rebuild-history',
    args: [],
    flags: ['--history-url'],
    summary: 'rebuild the history store from the journal (server stopped)',
    details:
      'Replays the journal from genesis into a new history store and swaps it in: the SQLite file in the data directory, or, with --history-url, a PostgreSQL schema (built beside the live one, swapped in one transaction).',
  },
];

/** The command named by the first words of `words`, with the remaining words as its arguments. */
export function findCommand(words: readonly string[]): { command: CommandSpec; args: string[] } | undefined {
  for (const length of [2, 1]) {
    const command = COMMANDS.find((c) => c.name === words.slice(0, length).join(' '));
    if (command !== undefined && command.name.split(' ').length === length) {
      return { command, args: words.slice(length) };
    }
  }
  return undefined;
}

/** The flags a command takes: its own and the common ones (offline commands: no --url). */
export const flagsOf = (command: CommandSpec): string[] => [
  ...command.flags,
  ...COMMON_FLAGS.filter((f) => command.call !== undefined || f !== '--url'),
];

/** Flags a command cannot do without (shown without brackets). */
const REQUIRED_FLAGS: ReadonlySet<string> = new Set(['--perms', '--to', '--rate', '--days']);

/** `name <args> [own flags]`, as in the overview. */
export function synopsis(command: CommandSpec): string {
  const own = command.flags.map((f) => {
    const spec = command.ownFlagSpecs?.[f] ?? (FLAGS[f] as FlagSpec);
    const text = spec.value === undefined ? f : `${f} ${spec.value}`;
    return REQUIRED_FLAGS.has(f) && command.ownFlagSpecs?.[f] === undefined
      ? text
      : `[${text}]${spec.repeat === true ? '...' : ''}`;
  });
  return [command.name, ...command.args, ...own].join(' ');
}

/** The overview: every command with its summary, the common flags, the environment. */
export function overview(): string {
  const lines = COMMANDS.map((c) => [synopsis(c), c.summary] as const);
  const width = Math.min(56, Math.max(...lines.map(([s]) => s.length)));
  return [
    'usage: bourse <command> [options]      (bourse <command> --help: its arguments and flags)',
    '',
    ...lines.map(([s, summary]) =>
      s.length > width ? `  ${s}\n  ${' '.repeat(width)}  ${summary}` : `  ${s.padEnd(width)}  ${summary}`,
    ),
    '',
    'processes (bourse <role> --help: what it needs; each takes the server’s flags, npm start -- --help):',
    ...ROLES.map((r) => `  ${r.padEnd(width)}  ${roleSummary(r)}`),
    '',
    'common options (verify, journal copy and rebuild-history take no --url):',
    ...COMMON_FLAGS.map((f) => flagLine(f)),
    '',
    'environment:',
    ...ENVIRONMENT.map(([name, help]) => `  ${name.padEnd(20)}  ${help}`),
    '',
    'Online commands find the server by itself: the admin address in <data>/listen.json, written by the',
    'server that runs on that data directory, and the admin token in <data>/admin.token.',
  ].join('\n');
}

function flagLine(flag: string, command?: CommandSpec): string {
  const spec = command?.ownFlagSpecs?.[flag] ?? (FLAGS[flag] as FlagSpec);
  return `  ${(spec.value === undefined ? flag : `${flag} ${spec.value}`).padEnd(20)}  ${spec.help}`;
}

/** `bourse <command> --help`. */
export function commandHelp(command: CommandSpec): string {
  return [
    `usage: bourse ${synopsis(command)} [options]`,
    '',
    `${command.summary[0]?.toUpperCase() ?? ''}${command.summary.slice(1)}.`,
    command.details,
    '',
    'options:',
    ...flagsOf(command).map((f) => flagLine(f, command)),
    '',
    'environment:',
    ...ENVIRONMENT.filter(([name]) => command.call !== undefined || name === 'BOURSE_DATA').map(
      ([name, help]) => `  ${name.padEnd(20)}  ${help}`,
    ),
  ].join('\n');
}

/** `bourse <group> --help`: the commands of a group (e.g. `withdraw`). */
export function groupHelp(group: string): string | undefined {
  const members = COMMANDS.filter((c) => c.name.split(' ')[0] === group);
  if (members.length === 0) return undefined;
  return [
    `usage: bourse ${group} <${members.map((c) => c.name.split(' ')[1] ?? '').join('|')}> …`,
    '',
    ...members.map((c) => `  ${synopsis(c)}\n      ${c.summary}`),
    '',
    `bourse ${group} <command> --help: its arguments and flags`,
  ].join('\n');
}
