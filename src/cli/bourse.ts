/**
 * @module bourse — the operator CLI. Online commands talk to the running server's admin API with
 * the token the server keeps in its data directory; offline commands (verify, rebuild-history)
 * work on the data directory directly while the server is stopped.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const USAGE = `usage: bourse <command> [options]

  user create <name>                                   register a user
  key create <name> --perms asset,entrust,money,lever  create an API key (repeat --ip to bind addresses)
  deposit credit <name> <coin> <amount> [--ref <id>]   operator credit, applied once per --ref
  address create <name> <coin> [--chain <chain>]       the user's deposit address (and memo) on a chain
  withdraw-address add <name> <coin> <address> [--chain <chain>]
                                                       add a withdrawal address (<account>_<memo> on memo chains)
  withdraw-address verify <name> <coin> <address>      verify it: withdrawals may go to it
  fund-password set <name> <password>                  set or reset the user's fund password (lifts a lock)
  withdraw list [--pending]                            withdrawals (--pending: those in progress)
  withdraw approve <id> | withdraw reject <id>         approve one waiting, or reject (cancel) one not sent
  withdraw show <id>                                   every step of one withdrawal
  chain deposit <address> <amount> [--memo <memo>] [--chain <chain>]
                                                       simulated chain: pay a deposit address; prints the hash
  chain mine [n]                                       simulated chain: mine n blocks (default 1)
  chain fail <hash>                                    simulated chain: fail a transaction not final yet
  market halt <market> | market resume <market>        stop or restart trading in a market
  snapshot                                             write a snapshot now
  state                                                the journal position and state hash
  verify                                               check journal and snapshots, replay from scratch (offline)
  rebuild-history                                      rebuild the history store from the journal (offline)

options:
  --url <url>    the server (default http://127.0.0.1:8080)
  --data <dir>   its data directory, where the admin token is (default ./data)
  --json         machine-readable output`;

export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

interface Parsed {
  readonly words: string[];
  readonly flags: Map<string, string[]>;
}

const VALUE_FLAGS = new Set(['--url', '--data', '--perms', '--ip', '--ref', '--chain', '--memo']);
const BOOL_FLAGS = new Set(['--json', '--help', '--pending']);

function parse(argv: readonly string[]): Parsed | string {
  const words: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (BOOL_FLAGS.has(name)) {
      if (eq > 0) return `${name} takes no value`;
      flags.set(name, ['true']);
    } else if (VALUE_FLAGS.has(name)) {
      // A following flag is not a value: `--perms --url x` lacks the perms.
      const value = eq > 0 ? arg.slice(eq + 1) : argv[i + 1]?.startsWith('--') ? undefined : argv[++i];
      if (value === undefined) return `${name} needs a value`;
      flags.set(name, [...(flags.get(name) ?? []), value]);
    } else return `unknown option ${name}`;
  }
  return { words, flags };
}

/** Runs one CLI invocation; resolves with the process exit code. */
export async function runCli(argv: readonly string[], io: CliIo, offline: OfflineCommands): Promise<number> {
  const parsed = parse(argv);
  if (typeof parsed === 'string') {
    io.err(`bourse: ${parsed}\n\n${USAGE}`);
    return 2;
  }
  const { words, flags } = parsed;
  const one = (name: string, fallback: string): string => flags.get(name)?.[0] ?? fallback;
  /** A form field from a value flag, when given. */
  const optionalFlag = (flag: string, field: string): [string, string][] =>
    flags.has(flag) ? [[field, one(flag, '')]] : [];
  const json = flags.has('--json');
  const dataDir = one('--data', './data');
  if (flags.has('--help') || words.length === 0) {
    io.out(USAGE);
    return words.length === 0 && !flags.has('--help') ? 2 : 0;
  }
  const [group, verb, ...rest] = words;
  const key = `${group} ${verb ?? ''}`.trim();

  if (group === 'verify' || group === 'rebuild-history') {
    return group === 'verify' ? offline.verify(dataDir, io, json) : offline.rebuildHistory(dataDir, io, json);
  }

  let path: string;
  let form: [string, string][];
  let show: (body: Record<string, unknown>) => string;
  switch (key) {
    case 'user create': {
      const [name] = rest;
      if (name === undefined) return usage(io, 'user create needs <name>');
      path = '/admin/users/create';
      form = [['name', name]];
      show = (b) => `user ${name} created with id ${String(b.userId)}`;
      break;
    }
    case 'key create': {
      const [name] = rest;
      if (name === undefined) return usage(io, 'key create needs <name>');
      path = '/admin/keys/create';
      form = [
        ['user', name],
        ['perms', one('--perms', '')],
        ...(flags.get('--ip') ?? []).map((ip): [string, string] => ['ip', ip]),
      ];
      show = (b) =>
        `access key: ${String(b.accessKey)}\nsecret key: ${String(b.secretKey)}\n(the secret is shown only now)`;
      break;
    }
    case 'deposit credit': {
      const [name, coin, amount] = rest;
      if (amount === undefined) return usage(io, 'deposit credit needs <name> <coin> <amount>');
      path = '/admin/deposits/credit';
      form = [
        ['user', name as string],
        ['coin', (coin as string).toLowerCase()],
        ['amount', amount],
        ...(flags.has('--ref') ? [['ref', one('--ref', '')] as [string, string]] : []),
      ];
      show = (b) =>
        b.duplicate === true
          ? `deposit ${String(b.depositId)} was already applied: nothing changed`
          : `credited ${amount} ${coin} to ${name} (${String(b.depositId)})`;
      break;
    }
    case 'address create': {
      const [name, coin] = rest;
      if (coin === undefined) return usage(io, 'address create needs <name> <coin>');
      path = '/admin/addresses/create';
      form = [['user', name as string], ['coin', coin], ...optionalFlag('--chain', 'chain')];
      show = (b) =>
        `${name}'s ${String(b.coin)} deposit address on ${String(b.chain)}: ${String(b.address)}` +
        (b.memo === '' ? '' : `\nmemo: ${String(b.memo)}  (deposits go to ${String(b.key)})`);
      break;
    }
    case 'withdraw-address add':
    case 'withdraw-address verify': {
      const [name, coin, address] = rest;
      if (address === undefined) return usage(io, `${key} needs <name> <coin> <address>`);
      path = `/admin/withdraw-addresses/${verb as string}`;
      form = [
        ['user', name as string],
        ['coin', coin as string],
        ['address', address],
        ...optionalFlag('--chain', 'chain'),
      ];
      show = (b) =>
        verb === 'add'
          ? `${b.duplicate === true ? 'already in' : 'added to'} ${name}'s withdrawal book: ${address} (${String(b.coin)} on ${String(b.chain)}); verify it with: bourse withdraw-address verify ${name} ${String(b.coin)} ${address}`
          : `${address} is ${b.duplicate === true ? 'already ' : ''}verified: ${name} may withdraw ${String(b.coin)} to it`;
      break;
    }
    case 'fund-password set': {
      const [name, password] = rest;
      if (password === undefined) return usage(io, 'fund-password set needs <name> <password>');
      path = '/admin/fund-password/set';
      form = [
        ['user', name as string],
        ['password', password],
      ];
      show = () => `fund password of ${name} set`;
      break;
    }
    case 'withdraw list':
      path = '/admin/withdrawals/list';
      form = flags.has('--pending') ? [['pending', '1']] : [];
      show = (b) => listWithdrawals(b.withdrawals as Record<string, unknown>[]);
      break;
    case 'withdraw approve':
    case 'withdraw reject':
    case 'withdraw show': {
      const [id] = rest;
      if (id === undefined) return usage(io, `${key} needs <id>`);
      path = `/admin/withdrawals/${verb as string}`;
      form = [['id', id]];
      show = (b) =>
        verb === 'show'
          ? listSteps(b.steps as Record<string, unknown>[])
          : `withdrawal ${id}: ${String(b.state)}${b.duplicate === true ? ' (already)' : ''}`;
      break;
    }
    case 'chain deposit': {
      const [address, amount] = rest;
      if (amount === undefined) return usage(io, 'chain deposit needs <address> <amount>');
      path = '/admin/chain/deposit';
      form = [
        ['address', address as string],
        ['amount', amount],
        ...optionalFlag('--memo', 'memo'),
        ...optionalFlag('--chain', 'chain'),
      ];
      show = (b) =>
        `${String(b.hash)}\n(${amount} ${String(b.coin)} on ${String(b.chain)}, pending: it is credited at ${String(b.required)} confirmations)`;
      break;
    }
    case 'chain mine': {
      const [blocks] = rest;
      path = '/admin/chain/mine';
      form = [['blocks', blocks ?? '1']];
      show = (b) => `mined ${String(b.mined)} block(s): height ${String(b.height)}`;
      break;
    }
    case 'chain fail': {
      const [hash] = rest;
      if (hash === undefined) return usage(io, 'chain fail needs <hash>');
      path = '/admin/chain/fail';
      form = [['hash', hash]];
      show = () => `transaction ${hash} failed`;
      break;
    }
    case 'market halt':
    case 'market resume': {
      const [market] = rest;
      if (market === undefined) return usage(io, `${key} needs <market>`);
      path = '/admin/markets/status';
      form = [
        ['market', market],
        ['status', verb === 'halt' ? 'halted' : 'trading'],
      ];
      show = () => `market ${market} ${verb === 'halt' ? 'halted' : 'trading'}`;
      break;
    }
    case 'snapshot':
      path = '/admin/snapshot';
      form = [];
      show = (b) => `snapshot written: ${String(b.path)}`;
      break;
    case 'state':
      path = '/admin/state';
      form = [];
      show = (b) => `seq ${String(b.lastSeq)}, state hash ${String(b.stateHash)}`;
      break;
    default:
      return usage(io, `unknown command '${words.join(' ')}'`);
  }

  let token: string;
  try {
    token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
  } catch (error) {
    io.err(
      `bourse: cannot read the admin token in ${dataDir}: ${(error as Error).message} (is --data right?)`,
    );
    return 1;
  }
  const url = one('--url', 'http://127.0.0.1:8080').replace(/\/$/, '') + path;
  let body: Record<string, unknown>;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/x-www-form-urlencoded',
        'user-agent': 'Mozilla/5.0 (compatible; bourse-cli/0.1)',
      },
      body: new URLSearchParams(form).toString(),
    });
    body = (await response.json()) as Record<string, unknown>;
  } catch (error) {
    io.err(`bourse: cannot reach ${url}: ${(error as Error).message}`);
    return 1;
  }
  if (body.code !== 1000) {
    if (json) io.out(JSON.stringify(body));
    else io.err(`bourse: refused (${String(body.code)}): ${String(body.message)}`);
    return 1;
  }
  const { code: _code, message: _message, ...data } = body;
  io.out(json ? JSON.stringify(data) : show(body));
  return 0;
}

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

function usage(io: CliIo, problem: string): number {
  io.err(`bourse: ${problem}\n\n${USAGE}`);
  return 2;
}

/** The commands that work on a stopped server's data directory. */
export interface OfflineCommands {
  verify(dataDir: string, io: CliIo, json: boolean): Promise<number>;
  rebuildHistory(dataDir: string, io: CliIo, json: boolean): Promise<number>;
}
