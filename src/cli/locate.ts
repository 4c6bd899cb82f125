/**
 * @module locate — how the CLI finds the server: the data directory (`--data`, then `BOURSE_DATA`,
 * then ./data), the admin address its server wrote there (listen.json), checked to be live and to
 * be that server, and the admin token beside it. The token goes only to that address, or to the
 * `--url` the operator gave: never to a guessed one (docs/operations.md, "The CLI: finding the
 * server").
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN_FILE } from '../config/data-dir.ts';
import { LISTEN_FILE, readListenFile, type ListenRecord } from '../config/listen-file.ts';
import { describeTarget, postAdmin, type AdminTarget } from './admin-client.ts';

export const DEFAULT_DATA_DIR = './data';

/** The data directory and where its name came from (for messages). */
export interface DataDirChoice {
  /** An absolute path. */
  readonly dir: string;
  readonly source: '--data' | 'BOURSE_DATA' | 'the default';
}

/** The data directory the CLI works on; a relative name is taken from `cwd` (the process's). */
export function chooseDataDir(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string = process.cwd(),
): DataDirChoice {
  if (flag !== undefined) return { dir: resolve(cwd, flag), source: '--data' };
  const fromEnv = env['BOURSE_DATA'];
  if (fromEnv !== undefined && fromEnv !== '') return { dir: resolve(cwd, fromEnv), source: 'BOURSE_DATA' };
  return { dir: resolve(cwd, DEFAULT_DATA_DIR), source: 'the default' };
}

/** The admin API found, with the token to send it, and notes for the operator (stderr). */
export interface Located {
  readonly target: AdminTarget;
  readonly token: string;
  readonly notes: readonly string[];
}

/** `--url`: `http://host:port` or `unix:<socket path>`; undefined when it is neither. */
export function parseAdminUrl(text: string): AdminTarget | undefined {
  if (text.startsWith('unix:') && text.length > 5) return { socket: text.slice(5) };
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' || url.pathname !== '/' || url.search !== '' || url.hash !== '')
      return undefined;
    return { url: `http://${url.host}` };
  } catch {
    return undefined;
  }
}

/** True when process `pid` exists (EPERM: it exists, as another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const targetOf = (record: ListenRecord): AdminTarget =>
  'socket' in record.admin ? { socket: record.admin.socket } : { url: record.admin.url };

/**
 * Finds the admin API of the server on `data` (or at `url`, when the operator named one) and
 * reads the admin token. Resolves with the problem, one paragraph for the operator, when there is
 * no server to talk to or it cannot be trusted with the token.
 */
export async function locateAdmin(
  data: DataDirChoice,
  url: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Located | string> {
  const dir = resolve(data.dir);
  const named = `the data directory ${dir} (${data.source})`;
  if (!existsSync(dir)) {
    return `${named} does not exist: name the server's with --data or BOURSE_DATA`;
  }
  const readToken = (): string | undefined => {
    try {
      return readFileSync(join(dir, ADMIN_TOKEN_FILE), 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  if (url !== undefined) {
    const target = parseAdminUrl(url);
    if (target === undefined) return `--url '${url}' must be http://<host>:<port> or unix:<socket path>`;
    const token = readToken();
    if (token === undefined)
      return `cannot read the admin token ${join(dir, ADMIN_TOKEN_FILE)}: is --data right?`;
    return { target, token, notes: [] };
  }

  const file = join(dir, LISTEN_FILE);
  let record: ListenRecord | undefined;
  try {
    record = readListenFile(dir);
  } catch (error) {
    return (error as Error).message;
  }
  if (record === undefined) {
    const port = env['BOURSE_PORT'];
    const hint =
      port === undefined
        ? ''
        : `\nBOURSE_PORT=${port} is only a hint: if a server's public API listens there, it runs on another data directory. ` +
          'The admin token is sent only to the address a server wrote into its own data directory, or to --url.';
    return (
      `no server is running on ${named}: it has no ${LISTEN_FILE}.\n` +
      `Start one (npm start -- --data ${data.dir}), or name the running server's data directory with --data or BOURSE_DATA.${hint}`
    );
  }
  if ((statSync(file).mode & 0o022) !== 0) {
    return `${file} may be written by other users: not trusted (the server writes it with mode 0600)`;
  }
  const target = targetOf(record);
  const where = describeTarget(target);
  const fix =
    'Start the server (it rewrites the file), or delete the file if no server runs on this directory.';
  if (!processAlive(record.pid)) {
    return `${file} is stale: the server that wrote it (pid ${record.pid}, started ${record.startedAt}) is not running. ${fix}`;
  }
  // The pid and the port may both have been reused since a crash: ask the address who it is
  // before the token goes there.
  let answer: string;
  try {
    const body = await postAdmin(target, '/admin/instance', [], undefined);
    answer = body.instance === record.instance ? '' : 'another server answers there';
  } catch (error) {
    answer = (error as Error).message;
  }
  if (answer !== '') {
    return (
      `the server that wrote ${file} (pid ${record.pid}, started ${record.startedAt}) does not answer at ` +
      `${where} (${answer}): it is stopping, or the file is stale and its pid reused. ` +
      `The admin token was not sent. ${fix}`
    );
  }
  const token = readToken();
  if (token === undefined) return `cannot read the admin token ${join(dir, ADMIN_TOKEN_FILE)}`;
  const port = env['BOURSE_PORT'];
  const notes =
    port !== undefined && port !== String(record.public.port)
      ? [`note: BOURSE_PORT=${port}, but the server of ${dir} listens on public port ${record.public.port}`]
      : [];
  return { target, token, notes };
}
