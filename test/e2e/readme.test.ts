/**
 * The README as a newcomer follows it (issue 31), on a venue started as its Quick start does (the
 * demo market running) but in a temporary directory on a free port: its operator commands as
 * written, its ccxt snippet run as written (only the address and the key put in), and the three
 * gaps of ccxt's zb adapter it states. Then, on the same venue, in order, the walk-throughs of
 * docs/ as written, their placeholders filled from what the commands before them printed:
 * docs/funds.md's (deposit, trade, withdraw), docs/margin.md's (fund the pool, borrow, trade on
 * margin, repay; what its script prints checked against what the doc shows), docs/operations.md's
 * shell lines, and last docs/scale-out.md's move of the journal to a JetStream stream and back (the
 * venue stopped and started again; skipped without a nats-server ≥ 2.10, as the JetStream tests).
 * test/e2e/cluster-walkthrough.test.ts runs scale-out.md's move to a cluster and back. The other
 * docs give reference material (formats, rules, example outputs), not steps to type in order.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ccxtErrors, connect } from '../fixtures/ccxt-client.ts';
import { bourseJson, runBourse } from '../fixtures/cli.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { TEST_USER_AGENT } from '../fixtures/zb-client.ts';
import { until } from '../fixtures/until.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';

fileTimeLimit(import.meta.url);

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
const doc = (name: string): string =>
  readFileSync(join(import.meta.dirname, '..', '..', 'docs', name), 'utf8');
const FUNDS = doc('funds.md');
const MARGIN = doc('margin.md');
const OPERATIONS = doc('operations.md');
const SCALE_OUT = doc('scale-out.md');
const root = mkdtempSync(join(tmpdir(), 'bourse-readme-'));
const dataDir = join(root, 'data');
let server: ServerProcess | undefined;
let nats: NatsServer | undefined;

/** The fenced code blocks of `text` after the line `after` (its first `count`), with their language. */
function blocksAfter(after: string, count = 1, text = README): { lang: string; body: string }[] {
  const from = text.indexOf(after);
  assert.ok(from >= 0, `no ${after}`);
  const blocks = [...text.slice(from).matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)];
  return blocks.slice(0, count).map((m) => ({ lang: m[1] as string, body: m[2] as string }));
}

/** The fenced code blocks of the section `heading` of `text` (to the next heading of its level). */
function sectionBlocks(heading: string, text: string): { lang: string; body: string }[] {
  const from = text.indexOf(`\n${heading}\n`);
  assert.ok(from >= 0, `no ${heading}`);
  const level = /^#+ /.exec(heading)?.[0] ?? '## ';
  const end = text.indexOf(`\n${level}`, from + heading.length + 2);
  return blocksAfter(heading, Infinity, text.slice(from, end < 0 ? undefined : end));
}

/**
 * What a doc shows as printed (`…` stands for what varies, an aside after two spaces and a
 * parenthesis is not printed), as a pattern of the whole text with its spaces collapsed.
 */
function shownAs(...lines: string[]): RegExp {
  const pieces = lines.map((l) =>
    l
      .replace(/\s{2,}\(.*$/, '')
      .trim()
      .split('…')
      .map((p) => p.replace(/\s+/g, ' ').replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*?'),
  );
  return new RegExp(`^${pieces.join(' ')}$`, 's');
}

/** Runs a .mjs file made of `source` (ccxt imported from this checkout); asserts exit 0; its output. */
function runScript(name: string, source: string): string {
  const file = join(root, name);
  writeFileSync(file, source.replace("from 'ccxt'", `from ${JSON.stringify(import.meta.resolve('ccxt'))}`));
  const run = spawnSync(process.execPath, [file], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.status, 0, `${name}:\n${run.stderr}\n${run.stdout}`);
  return run.stdout;
}

before(async () => {
  server = await startServer(dataDir, ['--demo']);
});
after(async () => {
  await server?.stop();
  await nats?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('the README, as written', () => {
  test('the Quick start is exactly its two commands', () => {
    const [quick] = blocksAfter('## Quick start');
    const commands = (quick?.body ?? '')
      .split('\n')
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter((l) => l !== '');
    assert.deepEqual(commands, ['npm install && npm start', 'npm test']);
  });

  let key: { accessKey: string; secret: string } | undefined;

  test('its operator commands make alice, her key and her money; the ticker answers', async () => {
    const [block] = blocksAfter('Then, in another terminal');
    const lines = (block?.body ?? '').split('\n').filter((l) => l.trim() !== '');
    assert.ok(lines.length >= 4, block?.body);
    for (const line of lines) {
      if (line.startsWith('npm run bourse -- ')) {
        const argv = line.slice('npm run bourse -- '.length).replace(/#.*$/, '').trim().split(/\s+/);
        const r = await runBourse([...argv, '--data', dataDir]);
        assert.equal(r.code, 0, `${line}\n${r.err}${r.out}`);
        const access = /access key: (\S+)\nsecret key: (\S+)/.exec(r.out);
        if (access !== null) key = { accessKey: access[1] as string, secret: access[2] as string };
      } else {
        const url = /curl -A Mozilla\/5\.0 '([^']+)'/.exec(line)?.[1];
        assert.ok(url !== undefined, `a README line this test does not know: ${line}`);
        const ticker = (await (
          await fetch(url.replace('http://127.0.0.1:8080', (server as ServerProcess).base), {
            headers: { 'user-agent': TEST_USER_AGENT },
          })
        ).json()) as { ticker?: { last?: string } };
        assert.ok(ticker.ticker?.last !== undefined, JSON.stringify(ticker));
      }
    }
    assert.ok(key !== undefined, 'key create printed no key');
  });

  test('its ccxt snippet runs as written against the venue', () => {
    assert.ok(key !== undefined, 'the commands above made no key');
    const [snippet] = blocksAfter('### ccxt');
    assert.equal(snippet?.lang, 'js');
    const out = runScript(
      'bot.mjs',
      (snippet?.body ?? '')
        .replace('http://127.0.0.1:8080', (server as ServerProcess).base)
        .replace('<access key>', key.accessKey)
        .replace('<secret key>', key.secret),
    );
    // Alice's 10,000 usdt, then her order resting in the open orders (then cancelled).
    assert.match(out, /free: 10000/, out);
    assert.match(out, /price: 20000/, out);
  });

  test('the three gaps it states: side undefined, no fetchMyTrades, no spot cancelAllOrders', async () => {
    assert.ok(key !== undefined);
    const zb = connect((server as ServerProcess).base, key.accessKey, key.secret);
    await zb.loadMarkets();
    const placed = await zb.createOrder('BTC/USDT', 'limit', 'buy', 0.01, 20000);
    try {
      const order = await zb.fetchOrder(placed.id, 'BTC/USDT');
      assert.equal(order.side, undefined, 'ccxt now reads the side: the README says it does not');
      assert.equal(
        String(order.info.type),
        '1',
        `the README says info.type is 1 for a buy: ${JSON.stringify(order.info)}`,
      );
      const open = await zb.fetchOpenOrders('BTC/USDT');
      assert.ok(open.length > 0 && open.every((o: { side: unknown }) => o.side === undefined));
      await assert.rejects(zb.fetchMyTrades('BTC/USDT'), (e: Error) => e instanceof ccxtErrors.NotSupported);
      await assert.rejects(
        zb.cancelAllOrders('BTC/USDT'),
        (e: Error) => e instanceof ccxtErrors.NotSupported,
      );
    } finally {
      await zb.cancelOrder(placed.id, 'BTC/USDT');
    }
  });
});

const keys = new Map<string, { accessKey: string; secret: string }>();
const addresses = new Map<string, string>();
const FUND_PASSWORD = 'my fund password';

/** Runs the `npm run bourse --` lines of a shell block, filling `<carol's T… address>` and the like. */
async function operator(body: string): Promise<string> {
  let said = '';
  const lines = body.split('\n');
  for (const [i, line] of lines.entries()) {
    if (!line.startsWith('npm run bourse -- ')) continue;
    // A refusal the doc shows under its command (`#   bourse: refused (3005): …`) is expected.
    const refusal = /^#\s+(bourse: refused .*)$/.exec(lines[i + 1] ?? '')?.[1];
    const command = line
      .slice('npm run bourse -- '.length)
      .replace(/#.*$/, '')
      .trim()
      .replace(
        /<(\w+)'s \S+ address>/g,
        (_, user: string) => addresses.get(user) ?? `<no address of ${user}>`,
      );
    const r = await runBourse([...command.split(/\s+/), '--data', dataDir], {
      readSecret: () => Promise.resolve(FUND_PASSWORD),
    });
    if (refusal === undefined) assert.equal(r.code, 0, `${line}\n${r.err}${r.out}`);
    else {
      assert.equal(r.code, 1, `${line} was not refused: ${r.out}`);
      assert.match(r.err.trim(), shownAs(refusal), line);
    }
    said += r.out;
    const user = /^(?:key|address) create (\w+)/.exec(command)?.[1];
    const key = /access key: (\S+)\nsecret key: (\S+)/.exec(r.out);
    if (user !== undefined && key !== null)
      keys.set(user, { accessKey: key[1] as string, secret: key[2] as string });
    const address = /deposit address on \w+: (\S+)/.exec(r.out)?.[1];
    if (user !== undefined && address !== undefined) addresses.set(user, address);
  }
  return said;
}

/** A JavaScript block with the venue's address and the keys the operator's commands printed. */
const withKeys = (body: string): string =>
  body
    .replace('http://127.0.0.1:8080', (server as ServerProcess).base)
    .replace(/'<(\w+) (access|secret) key>'/g, (_, user: string, which: string) => {
      const key = keys.get(user);
      assert.ok(key !== undefined, `no key of ${user}`);
      return JSON.stringify(which === 'access' ? key.accessKey : key.secret);
    });

describe('docs/funds.md’s walk-through, next, as written', () => {
  test('deposit, trade with the demo makers, withdraw: every command and script as written', async () => {
    const [users, trade, password, withdraw, mine] = blocksAfter('## Walk-through', 5, FUNDS);
    assert.deepEqual(
      [users, trade, password, withdraw, mine].map((b) => b?.lang),
      ['sh', 'js', 'sh', 'js', 'sh'],
    );
    await operator(users?.body ?? '');
    assert.deepEqual([...keys.keys()], ['carol', 'dave']);
    // The demo's makers quote before a person gets this far.
    const base = (server as ServerProcess).base;
    await until(
      'the demo makers’ book',
      async () => {
        const depth = (await (
          await fetch(`${base}/data/v1/depth?market=btc_usdt&size=5`, {
            headers: { 'user-agent': TEST_USER_AGENT },
          })
        ).json()) as { bids?: unknown[]; asks?: unknown[] };
        return (depth.bids?.length ?? 0) > 0 && (depth.asks?.length ?? 0) > 0 ? true : undefined;
      },
      60_000,
    );
    const traded = runScript('trade.mjs', withKeys(trade?.body ?? ''));
    // Carol's btc: what the makers' best ask held of 0.1, less the taker fee; nothing if the price
    // moved between her look at the book and her order (it rests then, as the walk-through says).
    const bought = Number(/^\{ free: ([\d.]+)/.exec(traded)?.[1]);
    assert.ok(bought >= 0 && bought < 0.1, `no btc balance printed:\n${traded}`);
    await operator(password?.body ?? '');
    // The withdrawal continues the trade script: its helper and clients, then the block.
    const tradeSource = withKeys(trade?.body ?? '');
    const clients = tradeSource.slice(0, tradeSource.indexOf('// The demo'));
    const sent = runScript('withdraw.mjs', `${clients}\n${withdraw?.body ?? ''}`);
    assert.match(sent, /T111111111111111111111111111111111/, sent);
    const listed = await operator(mine?.body ?? '');
    assert.match(
      listed,
      /#1 carol: 1000 usdt \(fee 1\) on TRC20 to T1{33}: succeeded tx [0-9a-f]+ \(\d+ conf\.\)/,
      listed,
    );
  });
});

/**
 * What a script shows it prints: the comment lines (`// …`, at the start of a line) under each
 * line that logs, in order.
 */
function printedAsShown(source: string): string[] {
  const shown: string[] = [];
  let logging = false;
  for (const line of source.split('\n')) {
    const comment = /^\/\/ (.*)$/.exec(line)?.[1];
    if (comment === undefined) logging = line.includes('console.log(');
    else if (logging) shown.push(comment);
  }
  return shown;
}

describe('docs/margin.md’s walk-through, next, as written', () => {
  test('fund the pool, transfer, borrow, trade on margin, repay, transfer back: as written, printing what it shows', async () => {
    const blocks = sectionBlocks('## Using margin', MARGIN);
    const [operatorBlock, ...scripts] = blocks;
    assert.equal(operatorBlock?.lang, 'sh');
    assert.ok(
      scripts.length >= 6 && scripts.every((b) => b.lang === 'js'),
      `the walk-through is one operator block, then the trader's script: ${blocks.map((b) => b.lang).join(' ')}`,
    );
    await operator(operatorBlock?.body ?? '');
    assert.ok(keys.has('erin'), 'key create erin printed no key');
    const source = scripts.map((b) => b.body).join('\n');
    const shown = printedAsShown(source);
    assert.ok(shown.length >= 8, shown.join('\n'));
    const printed = runScript('margin.mjs', withKeys(source));
    assert.match(printed.replace(/\s+/g, ' ').trim(), shownAs(...shown), printed);
  });

  test('the venue’s log of these commands: the refusal with its reason; the CLI’s own /admin/instance not at info', async () => {
    // The log reaches this process through a pipe it did not read while the script ran.
    const logged = (): Record<string, unknown>[] =>
      (server as ServerProcess)
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{') && l.endsWith('}'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const isRefusal = (l: Record<string, unknown>): boolean =>
      l['path'] === '/admin/lending/fund' && l['code'] === 3005;
    await until('the refusal in the log', () => (logged().some(isRefusal) ? true : undefined), 10_000);
    const lines = logged();
    const refused = lines.filter(isRefusal);
    assert.deepEqual(
      refused.map((l) => [l['level'], l['msg'], l['reason']]),
      [
        [
          'info',
          'POST /admin/lending/fund refused (3005): rate 0.5 % is outside 0.05..0.2 % per day',
          'rate 0.5 % is outside 0.05..0.2 % per day',
        ],
      ],
    );
    // Every CLI command above asked /admin/instance first (is this the server of listen.json?).
    const admin = lines.filter((l) => l['component'] === 'admin' && typeof l['path'] === 'string');
    assert.ok(admin.length >= 5, `the admin access log: ${admin.length} lines`);
    assert.deepEqual(
      admin.filter((l) => l['path'] === '/admin/instance'),
      [],
      'the CLI’s /admin/instance is logged below info',
    );
  });
});

/**
 * Runs a shell block with bash in the directory holding the venue's `data` (the README's layout),
 * `npm run bourse --` being this checkout's bin/bourse.js; `stdin` is what a person types.
 */
function shell(
  body: string,
  env: Record<string, string>,
  stdin: string,
): { code: number | null; out: string } {
  const bin = join(import.meta.dirname, '..', '..', 'bin', 'bourse.js');
  const npm = `npm() { [ "$1 $2 $3" = "run bourse --" ] || return 99; shift 3; ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} "$@"; }`;
  const run = spawnSync('bash', ['-e', '-c', `${npm}\n${body}`], {
    cwd: root,
    encoding: 'utf8',
    input: stdin,
    timeout: 60_000,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: root, ...env },
  });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

describe('docs/operations.md’s shell lines, next, as written', () => {
  test('the admin API by hand with curl; a fund password from a prompt and from standard input', () => {
    const blocks = [...OPERATIONS.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
    assert.equal(blocks.length, 2, 'operations.md’s shell blocks');
    const [byHand, password] = blocks as [string, string];
    // Its Unix-socket line is for a venue started with --admin-socket, which this one is not.
    const commands = byHand
      .replace(/\\\n/g, '')
      .split('\n')
      .filter((l) => !l.includes('# with --admin-socket'));
    assert.equal(commands.filter((l) => l.trim() !== '').length, 2, byHand);
    const state = shell(commands.join('\n'), {}, '');
    assert.equal(state.code, 0, state.out);
    assert.match(state.out, /^\{"code":1000,"message":"success",.*"stateHash":"[0-9a-f]{64}"/, state.out);
    const set = shell(password, { ALICE_FUND_PASSWORD: 'alice fund password' }, 'typed at the prompt\n');
    assert.equal(set.code, 0, set.out);
    assert.equal(set.out.match(/^fund password of alice set$/gm)?.length, 2, set.out);
  });
});

describe(
  'docs/scale-out.md’s move to the stream and back, last, as written',
  { skip: natsSkipReason() },
  () => {
    test('stop the venue, copy its journal into a stream, start on it; then back to files', async () => {
      const from = SCALE_OUT.indexOf('\n## From the embedded default to the stream, and back\n');
      const section = SCALE_OUT.slice(from, SCALE_OUT.indexOf('\n## ', from + 1));
      const copy = /^ *```sh\n *(npm run bourse -- journal copy .*)\n *```$/m.exec(section)?.[1];
      assert.ok(copy !== undefined, `no journal copy command in:\n${section}`);
      assert.match(section, /Start the venue with the same URL: `npm start -- --journal-url 'nats:\/\/…'`/);
      const back = /`(npm run bourse -- journal copy --to file)`/.exec(section)?.[1];
      assert.ok(back !== undefined, 'no way back in the section');

      // 1. A NATS server (the doc's address is an example: this one's is put in).
      nats = await startNatsServer();
      const url = new URL(nats.url);
      const command = copy
        .replace('nats://10.0.0.5:4222', nats.url)
        .replace('http://10.0.0.5:8222', nats.monitorUrl);
      assert.notEqual(command, copy);
      const streamUrl = /--to '([^']+)'/.exec(command)?.[1] as string;
      assert.ok(streamUrl.startsWith(`nats://${url.host}?stream=`), streamUrl);
      // 2. Stop the venue: a clean stop exits 0.
      assert.equal(await (server as ServerProcess).stop(), 0);
      server = undefined;
      // 3. The copy, verified by state hash.
      const copied = shell(command, {}, '');
      assert.equal(copied.code, 0, copied.out);
      const hash = /verified \(state hash ([0-9a-f]{64})\)/.exec(copied.out)?.[1];
      const records = Number(/journal copy: (\d+) records from /.exec(copied.out)?.[1]);
      assert.ok(hash !== undefined && records > 0, copied.out);
      // 4. The venue on the stream, at the state the copy verified (until its demo trades again).
      server = await startServer(dataDir, ['--demo', '--journal-url', streamUrl]);
      const onStream = await bourseJson(['state', '--data', dataDir]);
      assert.ok(Number(onStream['lastSeq']) >= records, JSON.stringify(onStream));
      if (onStream['lastSeq'] === records) assert.equal(onStream['stateHash'], hash);
      // Back to files: stop, copy back, start without --journal-url.
      assert.equal(await server.stop(), 0);
      server = undefined;
      const returned = shell(back, {}, '');
      assert.equal(returned.code, 0, returned.out);
      assert.match(returned.out, /start the server without --journal-url/);
      server = await startServer(dataDir, ['--demo']);
      const onFiles = await bourseJson(['state', '--data', dataDir]);
      assert.ok(Number(onFiles['lastSeq']) >= Number(onStream['lastSeq']), JSON.stringify(onFiles));
    });
  },
);
