/**
 * @module recent-ids — the request ids the journal's stream holds from its last few seconds, read
 * from the messages' headers only (`Bourse-Ids`), for an engine about to lead
 * (docs/scale-out.md, "Hot standby and failover").
 *
 * A standby's replica, or a recovery, starts from a snapshot and knows the ids of the commands
 * after it, with their results. A gateway sends a request again for up to 5 s
 * (command-link.ts): an id journaled before the snapshot within that time must be known too,
 * even without its result, or the request would be applied twice. `readRecentIds` gives them;
 * JournaledAnswers answers them "already applied" (NOT_ACCEPTED at the gateway: check its
 * effect), unless the replica or the replay brings their result.
 */
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { batchRange, batchTags } from '../journal/jetstream-journal.ts';

/** How far back an engine about to lead reads request ids (ms): well past a gateway's 5 s of resends. */
export const RECENT_IDS_MS = 30_000;

export interface RecentId {
  readonly id: string;
  readonly seq: number;
  /** When the stream stored its message (ms). */
  readonly at: number;
}

/** The ids journaled in the stream's messages stored since `sinceMs` (wall clock), oldest first. */
export async function readRecentIds(
  nc: NatsConnection,
  options: { readonly stream: string; readonly subject: string; readonly sinceMs: number },
): Promise<RecentId[]> {
  const jsm = await jetstreamManager(nc);
  let state;
  try {
    ({ state } = await jsm.streams.info(options.stream));
  } catch (error) {
    if (/stream not found/i.test((error as Error).message)) return []; // a new venue's first start
    throw error;
  }
  if (state.messages === 0) return [];
  const last = await jsm.streams.getMessage(options.stream, { seq: state.last_seq });
  if (last === null || last.time.getTime() < options.sinceMs) return [];
  const consumer = await jetstream(nc).consumers.get(options.stream, {
    filter_subjects: `${options.subject}.*`,
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(options.sinceMs).toISOString(),
    headers_only: true,
  });
  const messages = await consumer.consume();
  const ids: RecentId[] = [];
  try {
    for await (const m of messages) {
      const { first } = batchRange(m.headers, m.seq);
      const at = m.time.getTime();
      for (const [seq, id] of batchTags(m.headers, first)) ids.push({ id, seq, at });
      if (m.seq >= state.last_seq) break;
    }
  } finally {
    messages.stop();
  }
  return ids;
}
