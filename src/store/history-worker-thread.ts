/**
 * @module history-worker-thread — the body of the history worker (src/store/history-worker.ts):
 * one SQLite connection that applies the batches it is sent, in order, and answers each.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { HistoryWorkerReply, HistoryWorkerRequest } from './history-worker.ts';
import { SqliteHistoryStore, type SqliteHistoryStoreOptions } from './sqlite-history-store.ts';

const { path, options } = workerData as { path: string; options: SqliteHistoryStoreOptions };
const store = SqliteHistoryStore.open(path, options);
const port = parentPort;
if (port === null) throw new Error('history-worker-thread runs only as a worker');

port.on('message', (request: HistoryWorkerRequest) => {
  const answer = (reply: HistoryWorkerReply): void => port.postMessage(reply);
  const work = 'close' in request ? store.close().then(() => null) : store.applyBatch(request.entries);
  work.then(
    (result) => answer({ id: request.id, result }),
    (error: unknown) => answer({ id: request.id, error: (error as Error).message }),
  );
});
