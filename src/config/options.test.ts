import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_OPTIONS, demoAsked, isLoopbackHost, loadOptions, shownOptions } from './options.ts';

test('defaults: 127.0.0.1:8080 with data under ./data', () => {
  const o = loadOptions([], {});
  assert.deepEqual(o, DEFAULT_OPTIONS);
  assert.equal(o.host, '127.0.0.1');
  assert.equal(o.port, 8080);
  assert.equal(o.dataDir, './data');
  assert.ok(Object.isFrozen(o));
});

test('the admin API (the operator console) has a fixed default port, 8081: its address survives a restart', () => {
  assert.equal(loadOptions([], {}).adminPort, 8081);
  assert.equal(loadOptions(['--admin-port', '0'], {}).adminPort, 0);
  assert.equal(loadOptions([], { BOURSE_ADMIN_PORT: '9100' }).adminPort, 9100);
  assert.throws(
    () => loadOptions(['--port', '8081'], {}),
    /--admin-port: 8081 is the public port too \(--port\): the admin API needs its own; choose another for one of them \(the admin port is 8081 unless told\)/,
  );
  assert.equal(loadOptions(['--port', '8081', '--admin-port', '8082'], {}).port, 8081);
  // On different interfaces they may share a number.
  assert.equal(loadOptions(['--port', '8081', '--host', '127.0.0.2'], {}).port, 8081);
});

test('a mistyped flag is one problem, with the flag it probably meant', () => {
  const problem = (argv: string[]): string => {
    try {
      loadOptions(argv, {});
    } catch (error) {
      return (error as Error).message;
    }
    return '';
  };
  // `npm start -- --prot 9000`: the value is not a second unknown option.
  assert.equal(
    problem(['--prot', '9000']),
    'invalid options:\n  unknown option --prot (did you mean --port?)',
  );
  assert.equal(problem(['--prot=9000']), 'invalid options:\n  unknown option --prot (did you mean --port?)');
  assert.equal(
    problem(['--demmo', '--port', 'x']),
    "invalid options:\n  unknown option --demmo (did you mean --demo?)\n  --port: expected a whole number, got 'x'",
  );
  assert.equal(
    problem(['9000']),
    "invalid options:\n  unexpected argument '9000': every setting is a --flag (npm start -- --help)",
  );
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

test('connection limits and trusted proxies: flags and environment, checked', () => {
  const o = loadOptions(
    ['--max-connections-per-ip', '10', '--trusted-proxies', '10.0.0.0/8, ::1,192.168.1.7'],
    { BOURSE_MAX_CONNECTIONS: '500', BOURSE_KEEP_ALIVE_TIMEOUT_MS: '65000' },
  );
  assert.equal(o.maxConnections, 500);
  assert.equal(o.maxConnectionsPerIp, 10);
  assert.equal(o.keepAliveTimeoutMs, 65_000);
  assert.deepEqual(o.trustedProxies, ['10.0.0.0/8', '::1', '192.168.1.7']);
  assert.deepEqual(DEFAULT_OPTIONS.trustedProxies, [], 'no proxy is trusted by default');
  assert.throws(
    () => loadOptions(['--trusted-proxies=10.0.0.0/33,example.com,fd00::/129', '--max-connections', '0'], {}),
    (e: Error) =>
      /'10\.0\.0\.0\/33': the prefix must be 0 to 32/.test(e.message) &&
      /'example\.com' is not an IP address/.test(e.message) &&
      /'fd00::\/129': the prefix must be 0 to 128/.test(e.message) &&
      /--max-connections: 0 is outside 1/.test(e.message),
  );
  assert.throws(
    () => loadOptions(['--headers-timeout-ms', '30000'], {}),
    /--headers-timeout-ms must not exceed --request-timeout-ms/,
  );
});

test('--demo=true or false says it; unset, the demo is left to the rule below', () => {
  assert.equal(loadOptions([], {}).demo, undefined);
  assert.equal(loadOptions(['--demo=false'], {}).demo, false);
  assert.equal(loadOptions([], { BOURSE_DEMO: 'false' }).demo, false);
  assert.equal(loadOptions(['--demo'], { BOURSE_DEMO: 'false' }).demo, true);
});

test('the demo only when the operator asks, or on the README venue (npm start: loopback, ./data)', () => {
  const asked = (argv: string[], env: Record<string, string> = {}) => demoAsked(loadOptions(argv, env));
  // The README's one command.
  assert.deepEqual(asked([]), { run: true });
  assert.deepEqual(asked(['--data', './data']), { run: true });
  // The systemd unit of docs/operations.md: loopback behind a reverse proxy, its own data directory.
  const unit = asked([], { BOURSE_DATA: '/srv/bourse/data', BOURSE_PORT: '8080' });
  assert.equal(unit.run, false);
  assert.match(
    (unit as { reason: string }).reason,
    /^no demo: the data directory \/srv\/bourse\/data is not the default \.\/data \(start with --demo or --sandbox/,
  );
  assert.match((asked(['--host', '0.0.0.0']) as { reason: string }).reason, /beyond loopback/);
  assert.match((asked(['--demo=false']) as { reason: string }).reason, /--demo=false/);
  // Said explicitly, anywhere.
  assert.deepEqual(asked(['--data', '/tmp/x', '--demo']), { run: true });
  assert.deepEqual(asked(['--host', '0.0.0.0', '--data', '/tmp/x'], { BOURSE_SANDBOX: 'true' }), {
    run: true,
  });
  assert.equal(asked(['--sandbox', '--demo=false']).run, false);
});

test('--clock=manual only on a venue declared a sandbox (--sandbox), whatever its address or data', () => {
  assert.equal(loadOptions([], {}).clock, 'real');
  assert.equal(loadOptions(['--clock=manual', '--data', '/tmp/sandbox', '--sandbox'], {}).clock, 'manual');
  assert.equal(
    loadOptions(['--host', '0.0.0.0', '--data', '/tmp/x', '--sandbox'], { BOURSE_CLOCK: 'manual' }).clock,
    'manual',
  );
  assert.equal(loadOptions(['--clock=manual'], { BOURSE_SANDBOX: 'true' }).clock, 'manual');
  const refused = (argv: string[], env: Record<string, string> = {}): void =>
    assert.throws(
      () => loadOptions(argv, env),
      /--clock=manual: only a sandbox may stop time: declare this venue one with --sandbox/,
    );
  refused(['--clock=manual']);
  refused(['--clock=manual', '--data', './data']);
  // Loopback and a data directory of its own are what a production venue has too.
  refused(['--clock=manual', '--data', '/tmp/sandbox']);
  refused(['--clock', 'manual', '--host', 'localhost', '--data=x']);
  refused(['--clock=manual', '--data', '/tmp/x', '--host', '0.0.0.0']);
  refused([], { BOURSE_CLOCK: 'manual', BOURSE_HOST: '10.0.0.5', BOURSE_DATA: '/tmp/x' });
  assert.throws(
    () => loadOptions(['--clock=fast'], {}),
    /--clock: expected real, manual or speed:<n>, got 'fast'/,
  );
});

test('--clock=speed:<n>: a positive speed, only on a venue declared a sandbox', () => {
  assert.equal(loadOptions(['--clock=speed:1000', '--sandbox'], {}).clock, 'speed:1000');
  assert.equal(loadOptions(['--clock', 'speed:0.5'], { BOURSE_SANDBOX: 'true' }).clock, 'speed:0.5');
  assert.equal(loadOptions(['--sandbox'], { BOURSE_CLOCK: 'speed:60' }).clock, 'speed:60');
  for (const bad of [
    'speed:0',
    'speed:-1',
    'speed:abc',
    'speed:',
    'speed:1e3',
    'speed:2000000',
    'speed:1.2345',
  ]) {
    assert.throws(
      () => loadOptions([`--clock=${bad}`, '--sandbox'], {}),
      new RegExp(
        `--clock: '${bad}': the speed is a number from 0.001 to 1000000 \\(at most 3 decimals\\), such as speed:60`,
      ),
      bad,
    );
  }
  for (const argv of [['--clock=speed:10'], ['--clock=speed:10', '--data', '/tmp/x', '--host', '0.0.0.0']]) {
    assert.throws(
      () => loadOptions(argv, {}),
      /--clock=speed:10: only a sandbox may run time fast: declare this venue one with --sandbox \(BOURSE_SANDBOX=true\)/,
    );
  }
});

test('loopback hosts', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1']) assert.equal(isLoopbackHost(host), true);
  for (const host of ['0.0.0.0', '10.0.0.1', '::', 'example.com', '127.0.0.1.evil.com', ''])
    assert.equal(isLoopbackHost(host), false, host);
});
