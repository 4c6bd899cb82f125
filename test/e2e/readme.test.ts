/**
 * The README as a newcomer follows it (issue 31), on a venue started as its Quick start does (the
 * demo market running) but in a temporary directory on a free port: its operator commands as
 * written, its ccxt snippet run as written (only the address and the key put in), and the three
 * gaps of ccxt's zb adapter it states.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ccxtErrors, connect } from '../fixtures/ccxt-client.ts';
import { runBourse } from '../fixtures/cli.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { TEST_USER_AGENT } from '../fixtures/zb-client.ts';

fileTimeLimit(import.meta.url);

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
const root = mkdtempSync(join(tmpdir(), 'bourse-readme-'));
const dataDir = join(root, 'data');
let server: ServerProcess | undefined;

/** The fenced code blocks of `text` after the line `after` (its first `count`), with their language. */
function blocksAfter(after: string, count = 1): { lang: string; body: string }[] {
  const from = README.indexOf(after);
  assert.ok(from >= 0, `README has no ${after}`);
  const blocks = [...README.slice(from).matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)];
  return blocks.slice(0, count).map((m) => ({ lang: m[1] as string, body: m[2] as string }));
}

before(async () => {
  server = await startServer(dataDir, ['--demo']);
});
after(async () => {
  await server?.stop();
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
    const source = (snippet?.body ?? '')
      .replace("from 'ccxt'", `from ${JSON.stringify(import.meta.resolve('ccxt'))}`)
      .replace('http://127.0.0.1:8080', (server as ServerProcess).base)
      .replace('<access key>', key.accessKey)
      .replace('<secret key>', key.secret);
    const file = join(root, 'bot.mjs');
    writeFileSync(file, source);
    const run = spawnSync(process.execPath, [file], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    assert.equal(run.status, 0, `${run.stderr}\n${run.stdout}`);
    // Alice's 10,000 usdt, then her order resting in the open orders (then cancelled).
    assert.match(run.stdout, /free: 10000/, run.stdout);
    assert.match(run.stdout, /price: 20000/, run.stdout);
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
