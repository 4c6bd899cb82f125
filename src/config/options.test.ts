import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_OPTIONS, loadOptions } from './options.ts';

test('defaults: 127.0.0.1:8080 with data under ./data', () => {
  const o = loadOptions([], {});
  assert.deepEqual(o, DEFAULT_OPTIONS);
  assert.equal(o.host, '127.0.0.1');
  assert.equal(o.port, 8080);
  assert.equal(o.dataDir, './data');
  assert.ok(Object.isFrozen(o));
});

test('environment then flags, flags win', () => {
  const o = loadOptions(['--port', '9000', '--strict-user-agent', '--data=/tmp/x'], {
    BOURSE_PORT: '8081',
    BOURSE_DATA: '/var/bourse',
    BOURSE_KEEP_SNAPSHOTS: '3',
  });
  assert.equal(o.port, 9000);
  assert.equal(o.dataDir, '/tmp/x');
  assert.equal(o.keepSnapshots, 3);
  assert.equal(o.strictUserAgent, true);
});

test('every problem is reported at once', () => {
  assert.throws(
    () =>
      loadOptions(['--port', 'x', '--nope', '--keep-snapshots', '1', '--data'], {
        BOURSE_PRUNE_JOURNAL: 'maybe',
      }),
    (e: Error) =>
      /--port: expected a whole number/.test(e.message) &&
      /unknown option --nope/.test(e.message) &&
      /--keep-snapshots: 1 is outside 2/.test(e.message) &&
      /--data: missing value/.test(e.message) &&
      /BOURSE_PRUNE_JOURNAL: expected true or false/.test(e.message),
  );
});
