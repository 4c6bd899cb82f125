/**
 * @module journal-url — the JetStream journal's one setting (`--journal-url`) read into its
 * parts: `nats://host:4222[,host:4222…][?stream=NAME&subject=SUBJECT&monitor=http://host:8222[,…]]`.
 * The monitoring endpoints default to each server's host on port 8222 (where the journal checks
 * `sync_interval: always`); the stream to `BOURSE_JOURNAL`, the subject to `bourse.journal`.
 */

export interface JetStreamLocation {
  readonly servers: readonly string[];
  readonly monitorUrls: readonly string[];
  readonly stream: string;
  readonly subject: string;
}

export const DEFAULT_JOURNAL_STREAM = 'BOURSE_JOURNAL';
export const DEFAULT_JOURNAL_SUBJECT = 'bourse.journal';
/** nats-server's usual monitoring port. */
const DEFAULT_MONITOR_PORT = 8222;

/** The parts of a journal URL; throws an Error naming the problem. */
export function parseJournalUrl(text: string): JetStreamLocation {
  const at = text.indexOf('?');
  const list = at < 0 ? text : text.slice(0, at);
  const query = new URLSearchParams(at < 0 ? '' : text.slice(at + 1));
  if (!list.startsWith('nats://')) throw new Error(`expected nats://host:port, got '${redact(text)}'`);
  const servers = list.split(',').map((s) => (s.includes('://') ? s : `nats://${s}`));
  const hosts = servers.map((server) => {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new Error(`'${redact(server)}' is not a URL`);
    }
    if (url.protocol !== 'nats:' || url.hostname === '') {
      throw new Error(`expected nats://host:port, got '${redact(server)}'`);
    }
    return url.hostname;
  });
  for (const name of query.keys()) {
    if (!['stream', 'subject', 'monitor'].includes(name)) {
      throw new Error(`unknown parameter '${name}' (stream, subject, monitor)`);
    }
  }
  const stream = query.get('stream') ?? DEFAULT_JOURNAL_STREAM;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(stream)) {
    throw new Error(`stream: letters, digits, _ and - only, got '${stream}'`);
  }
  const subject = query.get('subject') ?? DEFAULT_JOURNAL_SUBJECT;
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(subject)) {
    throw new Error(`subject: dot-separated tokens of letters, digits, _ and -, got '${subject}'`);
  }
  const monitor = query.get('monitor');
  const monitorUrls =
    monitor === null
      ? hosts.map((h) => `http://${h.includes(':') ? `[${h}]` : h}:${DEFAULT_MONITOR_PORT}`)
      : monitor.split(',');
  for (const m of monitorUrls) {
    if (!/^https?:\/\/[^/]/.test(m)) throw new Error(`monitor: expected http://host:port, got '${m}'`);
  }
  return { servers, monitorUrls, stream, subject };
}

/** Why `text` is not a journal URL, or undefined when it is one. */
export function journalUrlProblem(text: string): string | undefined {
  try {
    parseJournalUrl(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The location for logs and messages (passwords hidden). */
export function describeJetStream(location: JetStreamLocation): string {
  return `JetStream stream ${location.stream} on ${location.servers.map(redact).join(',')}`;
}

function redact(text: string): string {
  return text.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}
