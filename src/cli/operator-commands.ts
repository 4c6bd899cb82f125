/**
 * @module operator-commands — `bourse operator list | add | remove`: the named operators of the
 * admin API (src/api/admin/operators.ts), managed with the bootstrap token the CLI reads from the
 * data directory. `operator add` prints the operator's token and, for the roles that move money,
 * the TOTP secret and its otpauth:// address, once.
 */
import type { CommandSpec, FlagSpec } from './commands.ts';
import { table } from './view-commands.ts';

type Row = Record<string, unknown>;

export const OPERATOR_FLAGS: Readonly<Record<string, FlagSpec>> = {
  '--replace': { help: 'a new token (and code) for an operator that exists: the old ones stop' },
};

const ROLES_HELP =
  'Roles: viewer (reads), operator (also acts on users and funds: freeze, credit, cancel orders, ' +
  'revoke keys, approve withdrawals), admin (also coins, markets, operators, snapshots, the demo, the clock).';

export const OPERATOR_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'operator list',
    args: [],
    flags: [],
    summary: 'the named operators of the admin API and console, with their roles',
    details: ROLES_HELP,
    call: () => ({
      path: '/admin/operators/list',
      form: [],
      show: (b) => {
        const rows = b.operators as Row[];
        return rows.length === 0
          ? 'no named operators yet (the admin.token of the data directory is the only key): bourse operator add'
          : table(rows, [
              ['operator', 'name'],
              ['role', 'role'],
              ['second factor', (r) => (r.secondFactor === true ? 'TOTP' : 'none')],
              ['created', (r) => new Date(Number(r.created)).toISOString()],
            ]);
      },
    }),
  },
  {
    name: 'operator add',
    args: ['<name>', '<viewer|operator|admin>'],
    flags: ['--replace'],
    summary: 'a named operator: its token, and for operator and admin a TOTP secret, printed once',
    details:
      `${ROLES_HELP} The operator signs in to the console with the token and, for operator and admin, ` +
      'the 6-digit code of an authenticator app set up with the secret (or the otpauth:// address). ' +
      'Neither is shown again; --replace gives new ones.',
    call: ([name, role], flags) => ({
      path: '/admin/operators/add',
      form: [
        ['name', name as string],
        ['role', role as string],
        ...(flags.has('--replace') ? [['replace', 'true'] as [string, string]] : []),
      ],
      show: (b) =>
        [
          `operator ${String(b.operator)} (${String(b.role)})`,
          `token (shown once): ${String(b.token)}`,
          ...(b.totpSecret === undefined
            ? ['second factor: none (a viewer moves no money)']
            : [
                `TOTP secret (shown once, for the authenticator app): ${String(b.totpSecret)}`,
                `otpauth address: ${String(b.otpauth)}`,
              ]),
        ].join('\n'),
    }),
  },
  {
    name: 'operator remove',
    args: ['<name>'],
    flags: [],
    summary: 'remove a named operator: its sessions end at once',
    details: 'The audit log keeps its actions under its name.',
    call: ([name]) => ({
      path: '/admin/operators/remove',
      form: [['name', name as string]],
      show: (b) => `operator ${String(b.operator)} removed`,
    }),
  },
];
