/**
 * @module history-worker-thread — the body of the history worker (src/store/history-worker.ts):
 * one connection to the store that applies the batches it is sent, in order, and answers each.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { HistoryWorkerReply, HistoryWorkerRequest } from './history-worker.ts';
import { openHistoryStore, type HistoryLocation } from './history-location.ts';

// A store that cannot open rejects every request with the reason (the worker does not exit).
const store = openHistoryStore(workerData as HistoryLocation);
store.catch(() => undefined);
const port = parentPort;
if (port === null) throw new Error('history-worker-thread runs only as a worker');

port.on('message', (request: HistoryWorkerRequest) => {
  const answer = (reply: HistoryWorkerReply): void => port.postMessage(reply);
  const work =
    'close' in request
      ? store
          .then(
            (opened) => opened.close(),
            () => undefined, // nothing was opened: nothing to close
          )
          .then(() => null)
      : store.then((opened) => opened.applyBatch(request.entries));
  work.then(
    (result) => answer({ id: request.id, result }),
    (error: unknown) => answer({ id: request.id, error: (error as Error).message }),
  );
});
