import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_OPTIONS, loadOptions, shownOptions } from './options.ts';

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

test('--history-url (BOURSE_HISTORY_URL) names a PostgreSQL history store; its password stays out of the log', () => {
  assert.equal(loadOptions([], {}).historyUrl, undefined);
  const o = loadOptions(['--history-url', 'postgres://bourse:s3cret@db:5432/venue?schema=h'], {});
  assert.equal(o.historyUrl, 'postgres://bourse:s3cret@db:5432/venue?schema=h');
  assert.equal(loadOptions([], { BOURSE_HISTORY_URL: 'postgresql://db/v' }).historyUrl, 'postgresql://db/v');
  assert.equal(shownOptions(o)['historyUrl'], 'postgres://bourse:***@db:5432/venue?schema=h');
  assert.doesNotMatch(JSON.stringify(shownOptions(o)), /s3cret/);
  assert.throws(
    () => loadOptions(['--history-url', 'mysql://u:pw@db/v'], {}),
    (e: Error) =>
      /--history-url: expected postgres:\/\/user@host:port\/database, got 'mysql:\/\/u:\*\*\*@db\/v'/.test(
        e.message,
      ),
  );
});
