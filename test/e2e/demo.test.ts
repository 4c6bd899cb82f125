import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runCli } from '../../src/cli/bourse.ts';
import { offlineCommands } from '../../src/cli/offline.ts';
import { readGenesis } from '../../src/config/data-dir.ts';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { decodeCommand } from '../../src/sequencer/command-codec.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { TEST_USER_AGENT, ZbClient } from '../fixtures/zb-client.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { spawnNode } from '../fixtures/children.ts';
import { until } from '../fixtures/until.ts';

fileTimeLimit(import.meta.url);

const roots: string[] = [];
after(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
const dataDir = (): string => {
  const root = mkdtempSync(join(tmpdir(), 'bourse-demo-'));
  roots.push(root);
  return join(root, 'data');
};

/** Runs a `bourse` command on the data directory `dir` (it finds its server there); resolves with its exit code and output. */
async function bourse(_server: ServerProcess | undefined, dir: string, ...argv: string[]) {
  let out = '';
  const code = await runCli(
    [...argv, '--data', dir, '--json'],
    { out: (l) => (out += l), err: (l) => (out += l) },
    offlineCommands,
    {}, // none of the test process's BOURSE_* variables
  );
  return { code, body: JSON.parse(out) as Record<string, unknown> };
}

const pub = async (server: ServerProcess, path: string): Promise<unknown> =>
  (await fetch(`${server.base}${path}`, { headers: { 'user-agent': TEST_USER_AGENT } })).json();

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds (or fails after `ms`). */
async function eventually(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`);
    await sleep(200);
  }
}

/** The journal's commands, and the engine they rebuild, of a stopped server's data directory. */
async function journalOf(dir: string) {
  const journal = FileJournal.open(join(dir, 'journal'));
  try {
    const { engine } = await recover({
      genesis: readGenesis(dir),
      journal,
      snapshots: undefined,
      log: SILENT_LOG,
    });
    const commands = [...journal.read(1)].map(({ seq, payload }) => decodeCommand(seq, payload));
    return { engine, commands };
  } finally {
    await journal.close();
  }
}

describe('the demo market', () => {
  test('a fresh loopback venue trades from the start; the bots use the real API; demo stop ends them for good', async () => {
    const dir = dataDir();
    let server = await startServer(dir, ['--demo']);
    try {
      await eventually('the demo starts', async () => /demo trader: /.test(server.output()));
      const key = /API key (\S+) and secret (\S+)/.exec(server.output());
      assert.ok(key, `the demo trader's key is printed:\n${server.output()}`);
      assert.match(server.output(), /trading page: /);

      // Trades, a two-sided book on every market, within seconds.
      const markets = Object.keys((await pub(server, '/data/v1/markets')) as object);
      await eventually('every market has a two-sided book and trades', async () => {
        for (const m of markets) {
          const depth = (await pub(server, `/data/v1/depth?market=${m}&size=5`)) as { asks: []; bids: [] };
          const trades = (await pub(server, `/data/v1/trades?market=${m}`)) as [];
          if (depth.asks.length === 0 || depth.bids.length === 0 || trades.length === 0) return false;
        }
        return true;
      });

      // The demo trader's key works like any other; the faucet credits it, within the allowance.
      const trader = new ZbClient(server.base, key[1] as string, key[2] as string);
      const info = (await trader.call('getAccountInfo')) as { result: { base: { username: string } } };
      assert.equal(info.result.base.username, 'demo-trader');
      assert.equal(
        (
          await trader.call('faucet', [
            ['currency', 'usdt'],
            ['amount', '10'],
          ])
        ).code,
        1000,
      );
      const cli = await bourse(server, dir, 'faucet', 'demo-trader', 'usdt', '5');
      assert.equal(cli.code, 0, JSON.stringify(cli.body));
      const over = await bourse(server, dir, 'faucet', 'demo-trader', 'usdt', '1000000');
      assert.equal(over.code, 1);
      assert.equal(over.body.code, 1001);

      const status = await bourse(server, dir, 'demo', 'status');
      assert.equal(status.body.started, true);
      assert.equal(status.body.stopped, false);
      assert.ok((status.body.users as string[]).includes('demo-maker-btc_usdt'));

      // Stop for good: nothing more is sequenced, the bots' loops end.
      assert.equal((await bourse(server, dir, 'demo', 'stop')).code, 0);
      await eventually('the log says the bots stopped', async () =>
        /demo market stopped for good/.test(server.output()),
      );
      const before = (await bourse(server, dir, 'state')).body.lastSeq;
      await sleep(2_000);
      assert.equal((await bourse(server, dir, 'state')).body.lastSeq, before, 'no command after the stop');
      assert.equal(await server.stop(), 0);

      // The bots' orders are in the journal, as ordinary signed-API commands of demo users.
      const { engine, commands } = await journalOf(dir);
      const demoUsers = new Set(engine.demo.demoUsers());
      assert.ok(demoUsers.size >= 9, 'a trader, a maker per market, takers');
      const kinds = new Map<string, number>();
      for (const c of commands) {
        if ('userId' in c && demoUsers.has(c.userId)) kinds.set(c.type, (kinds.get(c.type) ?? 0) + 1);
      }
      for (const type of ['PlaceOrder', 'PlaceOrderBatch', 'CancelOrder'])
        assert.ok((kinds.get(type) ?? 0) > 0, `${type} by demo users: ${JSON.stringify([...kinds])}`);
      assert.equal(engine.demo.stopped, true);

      // A restart does not bring them back; their users stay, marked as demo.
      server = await startServer(dir, ['--demo']);
      await eventually('the start-up says why there is no demo', async () =>
        /stopped for good/.test(server.output()),
      );
      assert.doesNotMatch(server.output(), /demo market: /);
      const seq = (await bourse(server, dir, 'state')).body.lastSeq;
      await sleep(1_500);
      assert.equal((await bourse(server, dir, 'state')).body.lastSeq, seq);
      const after = await bourse(server, dir, 'demo', 'status');
      assert.equal(after.body.stopped, true);
      assert.equal((after.body.users as string[]).length, demoUsers.size);
    } finally {
      await server.stop();
    }
  });

  test("the demo trader's key is the same at each start of the same data directory, kept owner-only outside the journal", async () => {
    const dir = dataDir();
    const keyOf = async (server: ServerProcess): Promise<[string, string]> => {
      await eventually('the demo starts', async () => /demo trader: /.test(server.output()));
      const printed = /API key (\S+) and secret (\S+) \((\w+)/.exec(server.output());
      assert.ok(printed, server.output());
      const info = await new ZbClient(server.base, printed[1] as string, printed[2] as string).call(
        'getAccountInfo',
      );
      assert.equal(info.code ?? 1000, 1000, JSON.stringify(info));
      return [`${printed[1]} ${printed[2]}`, printed[3] as string];
    };
    let server = await startServer(dir, ['--demo']);
    try {
      const [first, firstKind] = await keyOf(server);
      assert.equal(firstKind, 'new');
      assert.equal(await server.stop(), 0);
      const file = join(dir, 'demo-trader.key');
      assert.equal(statSync(file).mode & 0o777, 0o600, 'the kept key is readable by the owner only');
      const secret = first.split(' ')[1] as string;
      assert.ok(readFileSync(file, 'utf8').includes(secret));
      for (const name of readdirSync(join(dir, 'journal')))
        assert.ok(
          !readFileSync(join(dir, 'journal', name)).includes(secret),
          `the secret is not in journal/${name}`,
        );

      server = await startServer(dir, ['--demo']);
      const [second, secondKind] = await keyOf(server);
      assert.deepEqual([second, secondKind], [first, 'kept'], 'the same key, said to be kept');
      assert.equal(await server.stop(), 0);

      // Without its kept secret the venue cannot hand the key out again: a new one, the old one deleted.
      rmSync(file);
      server = await startServer(dir, ['--demo']);
      const [third, thirdKind] = await keyOf(server);
      assert.equal(thirdKind, 'new');
      assert.notEqual(third, first);
      const old = await new ZbClient(server.base, ...(first.split(' ') as [string, string])).call(
        'getAccountInfo',
      );
      assert.equal(old.code, 1003, 'the old key no longer opens');
    } finally {
      await server.stop();
    }
  });

  test('--demo=false starts clean: no demo user, nothing journaled', async () => {
    const off = dataDir();
    const server = await startServer(off, ['--demo=false']);
    try {
      const status = await bourse(server, off, 'demo', 'status');
      assert.deepEqual([status.body.started, status.body.users], [false, []]);
      assert.equal((await bourse(server, off, 'state')).body.lastSeq, 0);
    } finally {
      await server.stop();
    }
  });

  test('the README’s npm start (nothing said, the default ./data of its directory) opens the demo', async () => {
    // The README's command, in a directory of the test's own standing for the checkout.
    const checkout = dirname(dataDir());
    const child = spawnNode([join(import.meta.dirname, '..', '..', 'src', 'main.ts')], {
      cwd: checkout,
      env: {
        BOURSE_PORT: '0',
        BOURSE_ADMIN_PORT: '0',
        BOURSE_LOG_FORMAT: 'json',
        XDG_CONFIG_HOME: join(checkout, 'config'),
      },
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await until(
        'the demo trader’s key',
        () => (/demo trader: sign in/.test(output) ? true : undefined),
        60_000,
      );
      assert.ok(output.includes(`(data in ${join(checkout, 'data')})`), output);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  test('a venue started as the systemd unit of docs/operations.md (its own BOURSE_DATA, on loopback, nothing said about the demo) starts clean', async () => {
    const dir = dataDir();
    const child = spawnNode([join(import.meta.dirname, '..', '..', 'src', 'main.ts')], {
      env: {
        BOURSE_DATA: dir,
        BOURSE_PORT: '0',
        BOURSE_ADMIN_PORT: '0',
        BOURSE_LOG_FORMAT: 'json',
        XDG_CONFIG_HOME: join(dir, '..', 'config'),
      },
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await until(
        'the reason it has no demo',
        () => /"msg":"no demo: [^"]*"/.exec(output) ?? undefined,
        60_000,
      );
      assert.match(
        output,
        /no demo: the data directory \S+ is not the default \.\/data \(start with --demo or --sandbox/,
      );
      const status = await bourse(undefined, dir, 'demo', 'status');
      assert.deepEqual([status.body.started, status.body.users], [false, []]);
      assert.equal((await bourse(undefined, dir, 'state')).body.lastSeq, 0);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
