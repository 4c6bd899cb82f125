import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { tcpEndpoint, writeListenFile, type ListenRecord } from '../config/listen-file.ts';
import { inFlagWords, runCli, type OfflineCommands } from './bourse.ts';
import { COMMANDS, ENVIRONMENT, flagsOf } from './commands.ts';
import { ROLES, roleSummary } from '../config/role-usage.ts';
import { DEFAULT_LEASE_TTL_MS } from '../cluster/leader-lease.ts';
import { runBourse } from '../../test/fixtures/cli.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const offline: OfflineCommands = {
  verify: () => Promise.reject(new Error('not called')),
  rebuildHistory: () => Promise.reject(new Error('not called')),
  journalCopy: () => Promise.reject(new Error('not called')),
};

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A fresh data directory holding an admin token. */
function dataDir(): string {
  const root = mkdtempSync(join(tmpdir(), 'bourse-cli-'));
  roots.push(root);
  const dir = join(root, 'data');
  mkdirSync(dir);
  writeFileSync(join(dir, 'admin.token'), `${'t'.repeat(64)}\n`, { mode: 0o600 });
  return dir;
}

/**
 * The working directory of every run: empty, so that ./data (the default) is never the
 * checkout's, where `npm start` may be running a server.
 */
const CWD = mkdtempSync(join(tmpdir(), 'bourse-cli-cwd-'));
roots.push(CWD);

async function run(
  argv: string[],
  env: Record<string, string> = {},
  readSecret?: (prompt: string) => Promise<string>,
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(
    argv,
    {
      out: (l) => (out += `${l}\n`),
      err: (l) => (err += `${l}\n`),
      ...(readSecret === undefined ? {} : { readSecret }),
    },
    offline,
    env,
    CWD,
  );
  return { code, out, err };
}

/** An HTTP server that records every request and answers `/admin/instance` with `instance`. */
async function fakeServer(instance: string): Promise<{
  server: Server;
  url: string;
  seen: { path: string; headers: IncomingHttpHeaders }[];
}> {
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify(
        req.url === '/admin/instance' ? { code: 1000, instance } : { code: 1000, lastSeq: 7, stateHash: 'h' },
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { server, url: `http://127.0.0.1:${port}`, seen };
}

const record = (pid: number, adminPort: number, instance = 'a'.repeat(32)): ListenRecord => ({
  pid,
  instance,
  startedAt: '2025-01-01T00:00:00.000Z',
  public: tcpEndpoint('127.0.0.1', 8080),
  admin: tcpEndpoint('127.0.0.1', adminPort),
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('command lines', () => {
  test('malformed command lines exit 2 with the problem and the usage, before any request', async () => {
    for (const [argv, problem] of [
      [['frobnicate'], /unknown command 'frobnicate'/],
      [['user', 'create'], /user create needs <name>/],
      [['user', 'create', 'a', 'b'], /user create takes <name>: 'b' is one too many/],
      [['deposit', 'credit', 'alice', 'usdt'], /needs <name> <coin> <amount>/],
      [['key', 'create', 'alice', '--perms'], /--perms needs a value/],
      [['key', 'create', 'alice', '--perms', 'asset', '--perms', 'money'], /--perms given twice/],
      [['user', 'create', 'x', '--bogus'], /user create has no option --bogus\n/],
      [['user', 'create', 'x', '--perms', 'asset'], /user create does not take --perms/],
      [['verify', '--url', 'http://127.0.0.1:1'], /verify does not take --url/],
      [['market', 'halt'], /market halt needs <market>/],
      [['market'], /market needs a command/],
      [['journal', 'copy'], /journal copy needs --to <file\|nats-url>/],
      [
        ['journal', 'copy', '--to', 'file', '--url', 'http://127.0.0.1:1'],
        /journal copy does not take --url/,
      ],
      [['address', 'create', 'alice'], /address create needs <name> <coin>/],
      [['address', 'create', 'alice', 'usdt', '--chain'], /--chain needs a value/],
      [['withdraw-address', 'add', 'alice', 'usdt'], /withdraw-address add needs <name> <coin> <address>/],
      [['withdraw-address', 'verify', 'alice'], /withdraw-address verify needs <name> <coin> <address>/],
      [
        ['withdraw-address', 'remove', 'alice', 'usdt', 'x'],
        /unknown command 'withdraw-address remove alice usdt x'/,
      ],
      [['withdraw', 'approve'], /withdraw approve needs <id>/],
      [['withdraw', 'reject'], /withdraw reject needs <id>/],
      [['withdraw', 'show'], /withdraw show needs <id>/],
      [['withdraw', 'list', '--pending=yes'], /--pending takes no value/],
      [['chain', 'deposit', '0xabc'], /chain deposit needs <address> <amount>/],
      [['chain', 'deposit', '0xabc', '1', '--memo'], /--memo needs a value/],
      [['chain', 'fail'], /chain fail needs <hash>/],
      [['chain', 'reorg'], /unknown command 'chain reorg'/],
      [['faucet', 'alice', 'usdt'], /faucet needs <name> <coin> <amount>/],
      [['clock', 'advance'], /clock advance needs <duration>/],
      [['clock', 'advance', '1h', '2h'], /clock advance takes <duration>: '2h' is one too many/],
      [['clock', 'rewind', '1h'], /clock takes no arguments|unknown command/],
      [['demo', 'start'], /unknown command 'demo start'/],
      [
        ['key', 'create', 'alice'],
        /key create needs --perms: a comma list of asset \(account and bills\), entrust/,
      ],
      // Runtime changes (issue 16).
      [['coin', 'add'], /coin add needs <coin>/],
      [['coin', 'change', 'sol'], /coin change needs something to change/],
      [['coin', 'add', 'sol', '--chain', 'SOL'], /coin add does not take --chain/],
      [
        ['market', 'change', 'sol_usdt'],
        /market change needs --min-amount, --min-size, --maker-fee or --taker-fee/,
      ],
      [['market', 'change', 'sol_usdt', '--price-scale', '3'], /market change does not take --price-scale/],
      [['market', 'close'], /market close needs <market>/],
      [['user', 'freeze'], /user freeze needs <name>/],
      [['user', 'withdraw-limit', 'alice', 'usdt'], /needs <name> <coin> <amount\|none>/],
      [['key', 'rotate'], /key rotate needs <access-key>/],
      [['key', 'reissue', 'alice'], /key reissue takes no arguments/],
      [
        ['fund-password', 'set', 'alice', 'hunter22'],
        /takes no password on the command line \(ps and the shell history/,
      ],
    ] as const) {
      const r = await run([...argv], { BOURSE_DATA: '/nonexistent' });
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.err, problem);
      assert.match(r.err, /usage: bourse/);
    }
    assert.equal((await run([])).code, 2);
    assert.equal((await run(['--help'])).code, 0);
    assert.equal((await run(['help'])).code, 0);
  });

  test('a mistyped option or command: the command’s own help and what was probably meant', async () => {
    for (const [argv, problem, help] of [
      [
        ['key', 'create', 'alice', '--prems', 'asset'],
        'key create has no option --prems (did you mean --perms?)',
        'usage: bourse key create <name> --perms',
      ],
      [
        ['user', 'list', '--serch', 'bo'],
        'user list has no option --serch (did you mean --search?)',
        'usage: bourse user list',
      ],
      [
        ['user', 'create', 'x', '--perms', 'asset'],
        'user create does not take --perms',
        'usage: bourse user create',
      ],
      [
        ['withdraw', 'list', '--pendin'],
        'withdraw list has no option --pendin (did you mean --pending?)',
        'usage: bourse withdraw list',
      ],
      [['usr', 'list'], "unknown command 'usr list' (did you mean user list?)", 'usage: bourse <command>'],
      [['stat'], "unknown command 'stat' (did you mean state?)", 'usage: bourse <command>'],
    ] as const) {
      const r = await run([...argv], { BOURSE_DATA: '/nonexistent' });
      assert.equal(r.code, 2, argv.join(' '));
      assert.ok(r.err.startsWith(`bourse: ${problem}\n\n${help}`), `${argv.join(' ')}:\n${r.err}`);
    }
  });

  test('--help for every command lists its arguments, every flag it takes and the environment', async () => {
    for (const command of COMMANDS) {
      for (const argv of [
        [...command.name.split(' '), '--help'],
        ['help', ...command.name.split(' ')],
        [...command.name.split(' '), '-h'],
      ]) {
        const r = await run(argv);
        assert.equal(r.code, 0, argv.join(' '));
        assert.match(
          r.out,
          new RegExp(`^usage: bourse ${command.name} ${command.args.join(' ')}`.replace(/[[\]]/g, '\\$&')),
        );
        for (const flag of flagsOf(command))
          assert.ok(r.out.includes(flag), `${command.name} --help: ${flag}`);
        assert.ok(r.out.includes('BOURSE_DATA'), `${command.name} --help: BOURSE_DATA`);
      }
    }
    const all = await run(['--help']);
    for (const command of COMMANDS) assert.ok(all.out.includes(command.name), command.name);
    for (const [name] of ENVIRONMENT) assert.ok(all.out.includes(name), name);
    const group = await run(['withdraw', '--help']);
    assert.equal(group.code, 0);
    assert.match(group.out, /withdraw approve <id>/);
  });
});

describe('finding the server', () => {
  test('no listen.json: a clear message; BOURSE_PORT is named as a hint and never gets the token', async () => {
    const dir = dataDir();
    const fake = await fakeServer('x');
    try {
      const port = new URL(fake.url).port;
      const r = await run(['state'], { BOURSE_DATA: dir, BOURSE_PORT: port });
      assert.equal(r.code, 1);
      assert.match(
        r.err,
        /no server is running on the data directory .* \(BOURSE_DATA\): it has no listen\.json/,
      );
      assert.match(r.err, new RegExp(`BOURSE_PORT=${port} is only a hint`));
      assert.deepEqual(fake.seen, []);
    } finally {
      fake.server.close();
    }
  });

  test('npm test beside npm start: without --data or BOURSE_DATA a run looks in its own empty directory, never the checkout’s ./data', async () => {
    for (const r of [await run(['state']), await runBourse(['state'])]) {
      assert.equal(r.code, 1);
      assert.doesNotMatch(r.err, new RegExp(escape(join(ROOT, 'data'))), r.err);
      assert.match(r.err, /\/bourse-cli-cwd-\w+\/data\b/, r.err);
    }
  });

  test('a data directory that does not exist is named, with where its name came from', async () => {
    const r = await run(['state', '--data', '/nonexistent/bourse']);
    assert.equal(r.code, 1);
    assert.match(r.err, /the data directory \/nonexistent\/bourse \(--data\) does not exist/);
    const d = await run(['state'], {});
    assert.ok(d.err.includes(`the data directory ${join(CWD, 'data')} (the default)`), d.err);
  });

  test('a stale listen.json (its server is dead) is a clear message, and nothing is sent', async () => {
    const dir = dataDir();
    const fake = await fakeServer('a'.repeat(32));
    try {
      const pid = deadPid();
      writeListenFile(dir, record(pid, Number(new URL(fake.url).port)));
      const r = await run(['state', '--data', dir]);
      assert.equal(r.code, 1);
      assert.match(
        r.err,
        new RegExp(
          `listen\\.json is stale: the server that wrote it \\(pid ${pid}, started .*\\) is not running`,
        ),
      );
      assert.deepEqual(fake.seen, []);
    } finally {
      fake.server.close();
    }
  });

  test('a live pid with another server at the address (pid and port reused): the token is not sent', async () => {
    const dir = dataDir();
    const fake = await fakeServer('b'.repeat(32));
    try {
      writeListenFile(dir, record(process.pid, Number(new URL(fake.url).port)));
      const r = await run(['state', '--data', dir]);
      assert.equal(r.code, 1);
      assert.match(
        r.err,
        /does not answer at http:\/\/127\.0\.0\.1:\d+ \(another server answers there\).*The admin token was not sent/,
      );
      assert.deepEqual(
        fake.seen.map((s) => [s.path, s.headers.authorization]),
        [['/admin/instance', undefined]],
      );
    } finally {
      fake.server.close();
    }
  });

  test('the address the server wrote gets the token once it has answered as itself', async () => {
    const dir = dataDir();
    const fake = await fakeServer('a'.repeat(32));
    try {
      writeListenFile(dir, record(process.pid, Number(new URL(fake.url).port)));
      const r = await run(['state'], { BOURSE_DATA: dir, BOURSE_PORT: '9999' });
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, 'seq 7, state hash h\n');
      assert.match(r.err, /note: BOURSE_PORT=9999, but the server of .* listens on public port 8080/);
      assert.deepEqual(
        fake.seen.map((s) => [s.path, s.headers.authorization]),
        [
          ['/admin/instance', undefined],
          ['/admin/state', `Bearer ${'t'.repeat(64)}`],
        ],
      );
    } finally {
      fake.server.close();
    }
  });

  test('a listen.json others may write is not trusted', async () => {
    const dir = dataDir();
    writeListenFile(dir, record(process.pid, 1));
    chmodSync(join(dir, 'listen.json'), 0o666);
    const r = await run(['state', '--data', dir]);
    assert.equal(r.code, 1);
    assert.match(r.err, /may be written by other users: not trusted/);
  });

  test('an explicit --url is the operator’s choice: it gets the token (no listen.json needed)', async () => {
    const dir = dataDir();
    const fake = await fakeServer('x');
    try {
      const r = await run(['state', '--data', dir, '--url', fake.url]);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(
        fake.seen.map((s) => [s.path, s.headers.authorization]),
        [['/admin/state', `Bearer ${'t'.repeat(64)}`]],
      );
      const bad = await run(['state', '--data', dir, '--url', 'ftp://x']);
      assert.equal(bad.code, 1);
      assert.match(bad.err, /--url 'ftp:\/\/x' must be http:\/\/<host>:<port> or unix:<socket path>/);
    } finally {
      fake.server.close();
    }
  });

  test('an unreachable --url is a clear error, not a crash', async () => {
    const r = await run(['state', '--data', dataDir(), '--url', 'http://127.0.0.1:1']);
    assert.equal(r.code, 1);
    assert.match(r.err, /cannot reach http:\/\/127\.0\.0\.1:1\/admin\/state/);
  });
});

describe('fund-password set', () => {
  test('the password comes from the secret reader, never from the arguments', async () => {
    const dir = dataDir();
    const fake = await fakeServer('x');
    const bodies: string[] = [];
    fake.server.prependListener('request', (req) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => bodies.push(text));
    });
    try {
      const prompts: string[] = [];
      const r = await run(['fund-password', 'set', 'alice', '--data', dir, '--url', fake.url], {}, (p) => {
        prompts.push(p);
        return Promise.resolve('s3cret pass');
      });
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(prompts, ['fund password for alice']);
      assert.deepEqual(bodies, ['user=alice&password=s3cret+pass']);
      const cancelled = await run(
        ['fund-password', 'set', 'alice', '--data', dir, '--url', fake.url],
        {},
        () => Promise.reject(new Error('cancelled: nothing was changed')),
      );
      assert.equal(cancelled.code, 1);
      assert.match(cancelled.err, /cancelled/);
      assert.equal(bodies.length, 1);
    } finally {
      fake.server.close();
    }
  });
});

describe('the scale-out roles', () => {
  test('bourse --help lists engine, gateway and history; bourse <role> --help says what it needs', async () => {
    const all = await run(['--help']);
    for (const role of ROLES)
      assert.match(all.out, new RegExp(`\n  ${role} +${escape(roleSummary(role))}\n`), role);
    for (const role of ROLES) {
      for (const argv of [
        [role, '--help'],
        ['help', role],
        [role, '-h'],
      ]) {
        const r = await run(argv);
        assert.equal(r.code, 0, argv.join(' '));
        assert.match(r.out, new RegExp(`^usage: bourse ${role} \\[options\\]`));
        assert.match(r.out, /--journal-url <nats-url> +BOURSE_JOURNAL_URL/);
      }
    }
    assert.match(
      (await run(['engine', '--help'])).out,
      new RegExp(`--lease-ttl-ms <n> +- +${DEFAULT_LEASE_TTL_MS} `),
    );
    const bare = await run(['gateway']);
    assert.equal(bare.code, 2);
    assert.match(bare.err, /gateway is a long-running process, not an operator command: run bourse gateway/);
  });

  test('each role’s own entry, and bin/bourse.js, answer --help (exit 0, nothing started)', () => {
    for (const role of ROLES) {
      for (const argv of [
        [join(ROOT, 'bin', 'bourse.js'), role, '--help'],
        [join(ROOT, 'src', 'cluster', `${role}-role.ts`), '--help'],
      ]) {
        const r = spawnSync(process.execPath, argv, { cwd: CWD, encoding: 'utf8', timeout: 60_000 });
        assert.equal(r.status, 0, `${argv.join(' ')}: ${r.stderr}`);
        assert.match(r.stdout, new RegExp(`^usage: bourse ${role} \\[options\\]`));
      }
    }
  });

  test('bourse --help loads none of the heavy modules (journal, engine, stores, offline tools)', () => {
    const hooks = join(CWD, 'record-loads.mjs');
    writeFileSync(
      hooks,
      "import { registerHooks } from 'node:module';\n" +
        'const loaded = [];\n' +
        'registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });\n' +
        "process.on('exit', () => process.stderr.write('LOADED ' + JSON.stringify(loaded)));\n",
    );
    for (const argv of [
      [join(ROOT, 'src', 'cli', 'main.ts'), '--help'],
      [join(ROOT, 'src', 'cli', 'main.ts'), 'gateway', '--help'],
    ]) {
      const r = spawnSync(process.execPath, ['--import', hooks, ...argv], { cwd: CWD, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const loaded = JSON.parse(/LOADED (.*)$/s.exec(r.stderr)?.[1] ?? '[]') as string[];
      const ours = loaded.filter((u) => u.includes('/src/')).map((u) => u.slice(u.indexOf('/src/') + 1));
      assert.ok(ours.includes('src/cli/bourse.ts'), ours.join(' '));
      const heavy = ours.filter((u) =>
        /^src\/(main\.ts|cli\/offline\.ts|cli\/journal-copy\.ts|engine\/|journal\/|store\/|sequencer\/|cluster\/)/.test(
          u,
        ),
      );
      assert.deepEqual(heavy, [], `${argv.slice(1).join(' ')} loads what it does not need`);
    }
  });
});

test('a refusal names what the person typed (--unit-decimal), not the admin API’s field (unitDecimal)', () => {
  assert.equal(inFlagWords('unitDecimal is required (0 to 15)'), '--unit-decimal is required (0 to 15)');
  assert.equal(
    inFlagWords("takerFee '0.5' must be a fraction from -0.1 to 0.1"),
    "--taker-fee '0.5' must be a fraction from -0.1 to 0.1",
  );
  assert.equal(
    inFlagWords('dailyWithdrawLimit is required with the first chain of sol'),
    '--daily-limit is required with the first chain of sol',
  );
  assert.equal(
    inFlagWords('replayProtection must be true or false'),
    '--replay-protection must be true or false',
  );
  // Words that are not fields stay.
  assert.equal(inFlagWords("unknown market 'x'; see getMarkets"), "unknown market 'x'; see getMarkets");
});
