/**
 * @module bourse — the operator CLI. Online commands find the running server by themselves
 * (locate.ts) and call its admin API with the token the server keeps in its data directory;
 * offline commands (verify, journal copy, rebuild-history) work on the data directory directly while the server
 * is stopped. The commands, their flags and help are in commands.ts.
 */
import { describeTarget, postAdmin } from './admin-client.ts';
import {
  commandHelp,
  COMMANDS,
  FLAGS,
  findCommand,
  flagsOf,
  groupHelp,
  overview,
  type CommandSpec,
  type FlagValues,
} from './commands.ts';
import { didYouMean } from '../config/did-you-mean.ts';
import { isRole, ROLES, roleUsage } from '../config/role-usage.ts';
import { FIELD_FLAGS } from './change-commands.ts';
import { chooseDataDir, locateAdmin } from './locate.ts';
import { readNewSecret } from './secret-input.ts';

export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Reads a new secret (a fund password); default: the terminal without echo, or standard input. */
  readonly readSecret?: (prompt: string) => Promise<string>;
}

/** The commands that work on a stopped server's data directory. */
export interface OfflineCommands {
  verify(dataDir: string, io: CliIo, json: boolean): Promise<number>;
  /** `historyUrl`: a PostgreSQL history store; without it, SQLite in the data directory. */
  rebuildHistory(dataDir: string, io: CliIo, json: boolean, historyUrl?: string): Promise<number>;
  /** `to`: `file` or a nats:// URL; `from`: the stream when not the one the data directory records. */
  journalCopy(dataDir: string, io: CliIo, json: boolean, to: string, from?: string): Promise<number>;
}

interface Parsed {
  readonly words: string[];
  readonly flags: Map<string, string[]>;
  /** The first flag no command takes: told once the command is known, with its help. */
  readonly unknown?: string;
}

function parse(argv: readonly string[]): Parsed | string {
  const words: string[] = [];
  const flags = new Map<string, string[]>();
  let unknown: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-h') {
      flags.set('--help', ['true']);
      continue;
    }
    if (!arg.startsWith('--')) {
      words.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const spec = FLAGS[name];
    if (spec === undefined) {
      unknown ??= name;
      continue;
    }
    if (spec.value === undefined) {
      if (eq > 0) return `${name} takes no value`;
      flags.set(name, ['true']);
      continue;
    }
    // A following flag is not a value: `--perms --url x` lacks the perms.
    const value = eq > 0 ? arg.slice(eq + 1) : argv[i + 1]?.startsWith('--') ? undefined : argv[++i];
    if (value === undefined) return `${name} needs a value`;
    if (spec.repeat !== true && flags.has(name)) return `${name} given twice`;
    flags.set(name, [...(flags.get(name) ?? []), value]);
  }
  return { words, flags, ...(unknown === undefined ? {} : { unknown }) };
}

/** A problem with the arguments or flags of `command`, or undefined. */
function checkUsage(command: CommandSpec, args: readonly string[], flags: FlagValues): string | undefined {
  const required = command.args.filter((a) => a.startsWith('<')).length;
  if (args.length < required) return `${command.name} needs ${command.args.join(' ')}`;
  if (args.length > command.args.length) {
    return (
      command.extraArgs ??
      `${command.name} takes ${command.args.length === 0 ? 'no arguments' : command.args.join(' ')}: ` +
        `'${args.slice(command.args.length).join(' ')}' is one too many`
    );
  }
  const allowed = flagsOf(command);
  const stray = [...flags.keys()].find((f) => !allowed.includes(f));
  return stray === undefined
    ? undefined
    : `${command.name} does not take ${stray}${didYouMean(stray, allowed)}`;
}

/**
 * Runs one CLI invocation; resolves with the process exit code: 0 done, 1 refused or failed,
 * 2 a malformed command line (nothing was sent). `env` and `cwd` (where ./data is) default to
 * the process's.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  offline: OfflineCommands,
  env: Readonly<Record<string, string | undefined>> = process.env,
  cwd: string = process.cwd(),
): Promise<number> {
  const parsed = parse(argv);
  if (typeof parsed === 'string') return usage(io, parsed);
  const { words, flags, unknown } = parsed;
  const help = flags.has('--help') || words[0] === 'help';
  const named = words[0] === 'help' ? words.slice(1) : words;
  if (named.length === 0) {
    if (help) io.out(overview());
    else io.err(overview());
    return help ? 0 : 2;
  }
  const role = named[0];
  if (isRole(role)) {
    if (help) {
      io.out(roleUsage(role));
      return 0;
    }
    return usage(
      io,
      `${role} is a long-running process, not an operator command: run bourse ${role} [options] ` +
        `(bin/bourse.js) or node src/cluster/${role}-role.ts [options]`,
    );
  }
  const found = findCommand(named);
  if (found === undefined) {
    const group = named.length === 1 ? groupHelp(named[0] as string) : undefined;
    if (group !== undefined && unknown === undefined) {
      if (help) io.out(group);
      else io.err(`bourse: ${named[0]} needs a command\n\n${group}`);
      return help ? 0 : 2;
    }
    if (unknown !== undefined)
      return usage(io, `unknown option ${unknown}${didYouMean(unknown, Object.keys(FLAGS))}`);
    const names = [...COMMANDS.map((c) => c.name), ...ROLES];
    return usage(io, `unknown command '${named.join(' ')}'${didYouMean(named.join(' '), names)}`);
  }
  const { command, args } = found;
  if (unknown !== undefined) {
    return usage(
      io,
      `${command.name} has no option ${unknown}${didYouMean(unknown, flagsOf(command))}`,
      command,
    );
  }
  if (help) {
    io.out(commandHelp(command));
    return 0;
  }
  const problem = checkUsage(command, args, flags);
  if (problem !== undefined) return usage(io, problem, command);
  const json = flags.has('--json');
  const data = chooseDataDir(flags.get('--data')?.[0], env, cwd);

  if (command.call === undefined) {
    if (command.name === 'verify') return offline.verify(data.dir, io, json);
    if (command.name === 'journal copy') {
      const to = flags.get('--to')?.[0];
      if (to === undefined) return usage(io, 'journal copy needs --to <file|nats-url>', command);
      return offline.journalCopy(data.dir, io, json, to, flags.get('--from')?.[0]);
    }
    const historyUrl = flags.get('--history-url')?.[0] ?? env['BOURSE_HISTORY_URL'];
    return offline.rebuildHistory(data.dir, io, json, historyUrl);
  }
  const call = command.call(args, flags);
  if (typeof call === 'string') return usage(io, call, command);

  const located = await locateAdmin(data, flags.get('--url')?.[0], env);
  if (typeof located === 'string') {
    io.err(`bourse: ${located}`);
    return 1;
  }
  for (const note of located.notes) io.err(`bourse: ${note}`);
  const form = [...call.form];
  if (command.secret !== undefined) {
    try {
      form.push([command.secret.field, await (io.readSecret ?? readNewSecret)(command.secret.prompt(args))]);
    } catch (error) {
      io.err(`bourse: ${(error as Error).message}`);
      return 1;
    }
  }
  let body: Record<string, unknown>;
  try {
    body = await postAdmin(located.target, call.path, form, located.token);
  } catch (error) {
    io.err(`bourse: cannot reach ${describeTarget(located.target)}${call.path}: ${(error as Error).message}`);
    return 1;
  }
  if (body.code !== 1000) {
    if (json) io.out(JSON.stringify(body));
    else io.err(`bourse: refused (${String(body.code)}): ${inFlagWords(String(body.message))}`);
    return 1;
  }
  const { code: _code, message: _message, ...rest } = body;
  io.out(json ? JSON.stringify(rest) : call.show(body));
  return 0;
}

/** A refusal's message with the admin API's field names (`unitDecimal`) said as the CLI's flags. */
export function inFlagWords(message: string): string {
  return message.replace(/\b[a-z]+[A-Z][A-Za-z]*\b/g, (word) => FIELD_FLAGS.get(word) ?? word);
}

/** A malformed command line: the problem, then the help of the command (or the overview); exit 2. */
function usage(io: CliIo, problem: string, command?: CommandSpec): number {
  io.err(`bourse: ${problem}\n\n${command === undefined ? overview() : commandHelp(command)}`);
  return 2;
}
