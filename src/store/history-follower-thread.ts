/**
 * @module history-follower-thread — the body of the history follower (history-follower.ts): an
 * engine replica restored from the main engine's snapshot, fed the journal payloads of the
 * applied commands, whose events go to the history store in one transaction per round.
 *
 * A round takes every request that has arrived: it decodes and applies their commands, then
 * writes all the resulting entries at once (retrying the write until the store takes it). So
 * when the store is slow the rounds grow instead of falling behind one small transaction at a time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Engine } from '../engine/engine.ts';
import { decodeCommand } from '../sequencer/command-codec.ts';
import type { FollowerReply, FollowerRequest, FollowerStart } from './history-follower.ts';
import type { HistoryEntry, HistoryStore } from './history-store.ts';
import { openHistoryStore } from './history-location.ts';

const RETRY_DELAY_MS = 500;

if (parentPort === null) throw new Error('history-follower-thread runs only as a worker');
const port = parentPort;
const reply = (message: FollowerReply): void => port.postMessage(message);

const start = workerData as FollowerStart;
// PostgreSQL connects asynchronously: requests queue up meanwhile, and the first round waits.
let store: HistoryStore | undefined;
const opening = openHistoryStore(start.store).then(
  (opened) => void (store = opened),
  (error: unknown) => fatal(`the history store cannot be opened: ${(error as Error).message}`),
);
const engine = Engine.restore(start.snapshot);
const queue: FollowerRequest[] = [];
let running = false;
let failed = false;

const replicaHash = engine.stateHash();
if (replicaHash !== start.stateHash) {
  fatal(`the replica's state hash ${replicaHash} does not match the engine's ${start.stateHash}`);
}

port.on('message', (request: FollowerRequest) => {
  queue.push(request);
  if (!running) void run();
});

function fatal(message: string): void {
  failed = true;
  reply({ type: 'fatal', message });
}

/** The commands of one request, applied to the replica, as history entries. */
function apply(request: Extract<FollowerRequest, { type: 'commands' }>, into: HistoryEntry[]): void {
  const { bytes, firstSeq, count } = request;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const seq = firstSeq + i;
    if (seq !== engine.lastSeq + 1)
      throw new Error(`command ${seq} does not follow the replica at ${engine.lastSeq}`);
    const length = view.getUint32(at, true);
    const payload = bytes.subarray(at + 4, at + 4 + length);
    at += 4 + length;
    const command = decodeCommand(seq, payload);
    const result = engine.apply(command);
    into.push({ seq, time: command.time, events: result.events });
  }
  if (at !== bytes.byteLength)
    throw new Error(`commands ${firstSeq}+${count}: ${bytes.byteLength - at} bytes left over`);
}

async function run(): Promise<void> {
  running = true;
  await opening;
  while (queue.length > 0 && !failed && store !== undefined) {
    const round = queue.splice(0);
    const entries: HistoryEntry[] = [];
    let closing = false;
    try {
      for (const request of round) {
        if (request.type === 'close') closing = true;
        else apply(request, entries);
      }
    } catch (error) {
      fatal((error as Error).message);
      break;
    }
    while (entries.length > 0) {
      try {
        await store.applyBatch(entries);
        reply({ type: 'written', seq: (entries[entries.length - 1] as HistoryEntry).seq });
        break;
      } catch (error) {
        reply({ type: 'retrying', message: (error as Error).message });
        await new Promise<void>((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      }
    }
    if (closing) {
      await store.close();
      reply({ type: 'closed' });
      port.close();
      return;
    }
  }
  running = false;
}
