import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SIGNAL_REPEAT_MS, stopSignalReader } from './stop-signals.ts';

/** A reader on a clock the test moves, and what it was asked to do. */
function reader(): {
  read: ReturnType<typeof stopSignalReader>;
  calls: string[];
  move: (ms: number) => void;
} {
  let now = 5_000;
  const calls: string[] = [];
  const read = stopSignalReader(
    {
      stop: (why) => calls.push(`stop ${why}`),
      repeated: (why) => calls.push(`repeated ${why}`),
      now: (why) => calls.push(`now ${why}`),
    },
    { clock: () => now },
  );
  return { read, calls, move: (ms) => (now += ms) };
}

test('the copies of one Ctrl-C (the terminal’s and npm’s) are one stop request', () => {
  const { read, calls, move } = reader();
  read('SIGINT');
  read('SIGINT');
  move(SIGNAL_REPEAT_MS - 1);
  read('SIGTERM');
  assert.deepEqual(calls, ['stop SIGINT', 'repeated SIGINT', 'repeated SIGTERM']);
});

test('a signal after the interval ends the process at once, and only once', () => {
  const { read, calls, move } = reader();
  read('SIGTERM');
  move(SIGNAL_REPEAT_MS);
  read('SIGINT');
  read('SIGINT');
  assert.deepEqual(calls, ['stop SIGTERM', 'now SIGINT']);
});

test('fields default to the signal; another reason brings its own', () => {
  const seen: unknown[] = [];
  const read = stopSignalReader({ stop: (_why, fields) => seen.push(fields), now: () => undefined });
  read('npm (pid 1) is gone', {});
  const again = stopSignalReader({ stop: (_why, fields) => seen.push(fields), now: () => undefined });
  again('SIGINT');
  assert.deepEqual(seen, [{}, { signal: 'SIGINT' }]);
});
