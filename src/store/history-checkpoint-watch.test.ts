import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryLog } from '../observability/memory-log.ts';
import { untilTrue } from '../../test/fixtures/until.ts';
import { HistoryCheckpointWatch } from './history-checkpoint-watch.ts';

test('the checkpoint watch follows the store another process writes, and says once when it cannot read it', async () => {
  let checkpoint = 5;
  let failing = false;
  const store = {
    checkpoint: (): Promise<number> =>
      failing ? Promise.reject(new Error('connection refused')) : Promise.resolve(checkpoint),
  };
  const logged = memoryLog('info');
  const watch = new HistoryCheckpointWatch(store, 3, logged.log, 10);
  assert.equal(watch.writtenSeq, 3);
  assert.equal(watch.failure, undefined);
  await untilTrue('the watch to read the checkpoint', () => watch.writtenSeq === 5);
  failing = true;
  checkpoint = 9;
  await untilTrue('a failed read to be logged', () => logged.messages().length === 1);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(watch.writtenSeq, 5, 'the last checkpoint read stands while the store cannot be read');
  assert.match(
    logged.messages()[0] as string,
    /cannot read its checkpoint \(connection refused\); the lag shown is from seq 5/,
  );
  failing = false;
  await untilTrue('the watch to read again', () => watch.writtenSeq === 9);
  assert.match(logged.messages().at(-1) as string, /can be read again/);
  assert.equal(logged.messages().length, 2);
  await watch.close();
});
