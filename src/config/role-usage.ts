/**
 * @module role-usage — what `bourse engine`, `bourse gateway` and `bourse history` (the scale-out
 * roles, docs/scale-out.md) are, and their `--help`: each takes the server's flags. Light on
 * imports, so that `bourse --help` and `bourse <role> --help` answer at once.
 */
import { serverFlagTable } from './options.ts';

export const ROLES = ['engine', 'gateway', 'history'] as const;
export type RoleName = (typeof ROLES)[number];

export const isRole = (word: string | undefined): word is RoleName => ROLES.includes(word as RoleName);

interface RoleSpec {
  readonly summary: string;
  readonly details: readonly string[];
  /** The role's own flags, beside the server's: flag, environment, default, meaning. */
  readonly flags: readonly (readonly [string, string, string, string])[];
}

const SPECS: Record<RoleName, RoleSpec> = {
  engine: {
    summary: 'the engine on a JetStream journal: leads the stream, or stands by to take over',
    details: [
      'Every engine on a stream is a candidate: one holds the lease and serves as the server does',
      '(public and admin API); the others follow the stream and take over when the lease lapses.',
      'Needs --journal-url; each engine has its own --data (with a copy of the first venue.json).',
    ],
    flags: [['--lease-ttl-ms <n>', '-', '1000', 'how long the lease outlives its holder, ms (≥ 100)']],
  },
  gateway: {
    summary: 'HTTP and WebSocket on a replica of the journal’s stream, sending commands to the engine',
    details: [
      'Needs --journal-url and a --data holding the venue’s venue.json (a copy of the engine’s);',
      'shares --history-url and --limits-url with the other gateways. Writes nothing in --data.',
    ],
    flags: [],
  },
  history: {
    summary: 'writes the history store from the journal’s stream (the engine runs --write-history=false)',
    details: [
      'Needs --journal-url, a --data holding venue.json (and, to start faster, the engine’s',
      'snapshots) and the store: --history-url (PostgreSQL), else SQLite in --data.',
    ],
    flags: [],
  },
};

export const roleSummary = (role: RoleName): string => SPECS[role].summary;

/** `bourse <role> --help`. */
export function roleUsage(role: RoleName): string {
  const spec = SPECS[role];
  return [
    `usage: bourse ${role} [options]   (or: node src/cluster/${role}-role.ts [options])`,
    '',
    `${spec.summary[0]?.toUpperCase() ?? ''}${spec.summary.slice(1)} (docs/scale-out.md).`,
    ...spec.details,
    '',
    ...serverFlagTable(spec.flags),
  ].join('\n');
}
