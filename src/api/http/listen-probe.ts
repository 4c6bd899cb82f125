/**
 * @module listen-probe — checks, before a server creates anything on disk, that the addresses it
 * will listen on are free, and turns a failed listen into one line an operator can act on.
 */
import { connect, createServer } from 'node:net';
import { dirname } from 'node:path';
import { lstatSync } from 'node:fs';

/** Where a listener goes: a TCP interface and port, or a Unix socket path. */
export type ListenTarget =
  { readonly host: string; readonly port: number; readonly socket?: undefined } | { readonly socket: string };

/** A listener that cannot be opened; `message` is one line saying which, why, and what to change. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/** What a listener is for, and the settings that change its address (for the messages). */
export interface ListenRole {
  /** e.g. "the public API". */
  readonly what: string;
  /** e.g. "--port or BOURSE_PORT". */
  readonly port: string;
  /** e.g. "--host or BOURSE_HOST". */
  readonly host: string;
  /** The setting of its Unix socket, if it may have one. */
  readonly socket?: string;
}

const describeTarget = (t: ListenTarget): string =>
  t.socket !== undefined ? `the Unix socket ${t.socket}` : `${t.host}:${t.port}`;

/** The one-line message for a listen that failed with `error`. */
export function listenProblem(target: ListenTarget, role: ListenRole, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const setting =
    target.socket !== undefined
      ? (role.socket ?? role.port)
      : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? role.host
        : role.port;
  const why =
    code === 'EADDRINUSE'
      ? target.socket !== undefined
        ? 'another server is listening there'
        : 'the port is in use (by another Bourse or another program)'
      : code === 'EACCES'
        ? target.socket !== undefined
          ? 'permission denied'
          : 'permission denied (ports below 1024 need privileges)'
        : code === 'EADDRNOTAVAIL'
          ? 'this machine has no interface with that address'
          : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
            ? 'unknown host name'
            : (error as Error).message;
  return `cannot listen on ${describeTarget(target)} for ${role.what}: ${why}; choose another with ${setting}`;
}

/**
 * Resolves with undefined when `target` can be listened on now, or with the one-line problem.
 * A TCP port is bound and released at once (with port 0, that checks the interface). A Unix socket path is free
 * when nothing is there, or when a socket is there that nobody accepts on (left by a killed
 * server: the listener replaces it).
 */
export function probeListen(target: ListenTarget, role: ListenRole): Promise<string | undefined> {
  return target.socket !== undefined ? probeSocket(target.socket, role) : probeTcp(target, role);
}

function probeTcp(target: { host: string; port: number }, role: ListenRole): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error) => resolve(listenProblem(target, role, error)));
    server.listen({ host: target.host, port: target.port, exclusive: true }, () =>
      server.close(() => resolve(undefined)),
    );
  });
}

/** The longest Unix socket path (bytes): sockaddr_un's 108 (104 on macOS) less the final NUL. */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'darwin' ? 103 : 107;

async function probeSocket(path: string, role: ListenRole): Promise<string | undefined> {
  const target = { socket: path };
  const refuse = (why: string): string =>
    `cannot listen on the Unix socket ${path} for ${role.what}: ${why}; choose another with ${role.socket ?? role.port}`;
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    return refuse(
      `the path is ${bytes} bytes long, and a socket path may have at most ${MAX_SOCKET_PATH_BYTES}`,
    );
  }
  try {
    if (!lstatSync(dirname(path)).isDirectory()) return refuse(`${dirname(path)} is not a directory`);
  } catch {
    return refuse(`the directory ${dirname(path)} does not exist`);
  }
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return undefined;
  }
  if (!isSocket) return refuse('a file that is not a socket is there');
  return (await socketAnswers(path)) ? listenProblem(target, role, { code: 'EADDRINUSE' }) : undefined;
}

/** True when a server accepts connections on the Unix socket `path`. */
export function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const client = connect(path);
    client.once('connect', () => {
      client.destroy();
      resolve(true);
    });
    client.once('error', () => resolve(false));
  });
}
