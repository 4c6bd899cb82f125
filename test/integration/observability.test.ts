/**
 * Watching a real server (src/main.ts in a child process): its log is JSON lines with the
 * documented fields at the chosen level, `/health` and `/ready` on both listeners, `/metrics` on
 * the admin one parsed by a real Prometheus-format parser with its families moving as orders
 * flow, readiness while a long journal replays, and a failed journal's stop logged once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { encodeCommand } from '../../src/sequencer/command-codec.ts';
import { until } from '../fixtures/until.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { WsTestClient } from '../fixtures/ws-client.ts';
import { admin, createTrader, ZbClient } from '../fixtures/zb-client.ts';
import { spawnNode } from '../fixtures/children.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const ROOT = join(import.meta.dirname, '..', '..');
const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function dataDir(): string {
  const root = mkdtempSync(join(tmpdir(), 'bourse-watch-'));
  roots.push(root);
  return join(root, 'data');
}

/** A GET with no User-Agent, as probes and scrapers may send it. */
function get(url: string, method = 'GET'): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const json = async (url: string): Promise<{ status: number; body: Record<string, unknown> }> => {
  const r = await get(url);
  return { status: r.status, body: JSON.parse(r.text) as Record<string, unknown> };
};

/** The server's log lines (its standard output holds nothing else). */
function logLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Every sample of a family as `labels → value` (histograms: their count). */
function samples(
  families: ParsedFamily[],
  name: string,
): { labels: Record<string, string>; value: number }[] {
  const family = families.find((f) => f.name === name);
  assert.ok(family !== undefined, `no metric family ${name}`);
  return family.metrics.map((m) => ({ labels: m.labels ?? {}, value: Number(m.value ?? m.count) }));
}

function sample(families: ParsedFamily[], name: string, labels: Record<string, string> = {}): number {
  const found = samples(families, name).find((s) =>
    Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return found?.value ?? 0;
}

async function scrape(server: ServerProcess): Promise<ParsedFamily[]> {
  const r = await get(`${server.adminBase}/metrics`);
  assert.equal(r.status, 200);
  assert.match(r.type, /^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(r.text);
}

const FAMILIES = [
  ['bourse_commands_total', 'COUNTER'],
  ['bourse_order_entry_latency_seconds', 'HISTOGRAM'],
  ['bourse_journal_flush_records', 'HISTOGRAM'],
  ['bourse_journal_fdatasync_seconds', 'HISTOGRAM'],
  ['bourse_journal_durable_seq', 'GAUGE'],
  ['bourse_journal_bytes_total', 'COUNTER'],
  ['bourse_commands_in_flight', 'GAUGE'],
  ['bourse_engine_seq', 'GAUGE'],
  ['bourse_history_lag_commands', 'GAUGE'],
  ['bourse_history_written_seq', 'GAUGE'],
  ['bourse_history_thread_heap_bytes', 'GAUGE'],
  ['bourse_snapshot_last_seq', 'GAUGE'],
  ['bourse_snapshot_last_timestamp_seconds', 'GAUGE'],
  ['bourse_open_orders', 'GAUGE'],
  ['bourse_book_levels', 'GAUGE'],
  ['bourse_book_amount', 'GAUGE'],
  ['bourse_ws_connections', 'GAUGE'],
  ['bourse_ws_connections_accepted_total', 'COUNTER'],
  ['bourse_ws_messages_sent_total', 'COUNTER'],
  ['bourse_ws_slow_consumers_dropped_total', 'COUNTER'],
  ['bourse_rate_limit_locked_ips', 'GAUGE'],
  ['bourse_ready', 'GAUGE'],
  ['nodejs_eventloop_lag_p99_seconds', 'GAUGE'],
  ['nodejs_gc_duration_seconds', 'HISTOGRAM'],
  ['process_resident_memory_bytes', 'GAUGE'],
  ['process_cpu_seconds_total', 'COUNTER'],
  ['nodejs_heap_size_used_bytes', 'GAUGE'],
] as const;

const order = (client: ZbClient, tradeType: '0' | '1', price: string, amount: string) =>
  client.call('order', [
    ['currency', 'btc_usdt'],
    ['tradeType', tradeType],
    ['price', price],
    ['amount', amount],
  ]);

describe('watching a running server', () => {
  test('JSON logs, /health and /ready on both listeners, /metrics that moves as orders flow', async () => {
    const server = await startServer(dataDir());
    try {
      // Every line of the log is a JSON object with the documented fields. (The fixture may have
      // seen listen.json before the asynchronous log reached the pipe.)
      await until('the start-up lines', () =>
        logLines(server.output()).some((l) => /^listening on/.test(l['msg'] as string)) ? true : undefined,
      );
      const startLines = logLines(server.output());
      assert.ok(startLines.length >= 4, server.output());
      for (const line of startLines) {
        for (const field of ['time', 'level', 'pid', 'hostname', 'component', 'msg']) {
          assert.ok(field in line, `${field} missing in ${JSON.stringify(line)}`);
        }
        assert.ok(['info', 'warn'].includes(line['level'] as string), JSON.stringify(line));
      }
      const starting = startLines.find((l) => l['msg'] === 'starting');
      assert.equal((starting?.['settings'] as { logLevel: string }).logLevel, 'info');
      assert.ok(
        startLines.some(
          (l) => l['component'] === 'recovery' && /^recovered at seq 0/.test(l['msg'] as string),
        ),
      );

      // Health and readiness: figures on the admin listener, the status alone on the public one.
      const health = await json(`${server.adminBase}/health`);
      assert.equal(health.status, 200);
      assert.equal(health.body['status'], 'alive');
      assert.equal(health.body['phase'], 'running');
      assert.deepEqual(await json(`${server.base}/health`), { status: 200, body: { status: 'alive' } });
      const ready = await json(`${server.adminBase}/ready`);
      assert.equal(ready.status, 200);
      assert.equal(ready.body['ready'], true);
      assert.deepEqual(Object.keys(ready.body['checks'] as object), ['recovered', 'journal', 'history']);
      assert.deepEqual(await json(`${server.base}/ready?verbose=1`), { status: 200, body: { ready: true } });
      assert.equal((await get(`${server.base}/ready`, 'POST')).status, 405);
      const publicMetrics = await get(`${server.base}/metrics`);
      assert.equal(publicMetrics.status, 404, 'no /metrics on the public listener by default');

      const before = await scrape(server);
      for (const [name, type] of FAMILIES) {
        assert.equal(before.find((f) => f.name === name)?.type, type, name);
      }
      const ordersBefore = sample(before, 'bourse_order_entry_latency_seconds');

      const watcher = await WsTestClient.connect(`${server.base.replace('http', 'ws')}/websocket`);
      watcher.subscribe('btcusdt_depth');
      const buyer = await createTrader(server, 'buyer', [['usdt', '100000']]);
      const seller = await createTrader(server, 'seller', [['btc', '1']]);
      for (let i = 0; i < 5; i++) assert.equal((await order(buyer, '1', '30000', '0.01'))['code'], 1000);
      for (let i = 0; i < 3; i++) assert.equal((await order(seller, '0', '30000', '0.01'))['code'], 1000);
      assert.equal((await order(seller, '0', '30000', '100'))['code'], 2009);
      // A signature that does not hold: refused, and logged at warn.
      const forger = new ZbClient(server.base, buyer.accessKey, 'not-the-secret');
      assert.equal((await forger.call('getAccountInfo'))['code'], 1003);
      await watcher.take((m) => m?.channel === 'btcusdt_depth', 5_000, 'a depth push');

      const afterOrders = await until('the metrics to show the orders', async () => {
        const families = await scrape(server);
        return sample(families, 'bourse_ws_messages_sent_total', { kind: 'push' }) > 0 ? families : undefined;
      });
      assert.equal(sample(afterOrders, 'bourse_commands_total', { kind: 'PlaceOrder', result: 'OK' }), 8);
      assert.equal(
        sample(afterOrders, 'bourse_commands_total', { kind: 'PlaceOrder', result: 'INSUFFICIENT_BALANCE' }),
        1,
      );
      assert.equal(sample(afterOrders, 'bourse_commands_total', { kind: 'RegisterUser', result: 'OK' }), 2);
      assert.equal(sample(afterOrders, 'bourse_order_entry_latency_seconds') - ordersBefore, 9);
      assert.ok(
        sample(afterOrders, 'bourse_journal_flush_records') > sample(before, 'bourse_journal_flush_records'),
      );
      assert.ok(
        sample(afterOrders, 'bourse_journal_fdatasync_seconds') >
          sample(before, 'bourse_journal_fdatasync_seconds'),
      );
      assert.ok(sample(afterOrders, 'bourse_engine_seq') > sample(before, 'bourse_engine_seq'));
      assert.equal(
        sample(afterOrders, 'bourse_journal_durable_seq'),
        sample(afterOrders, 'bourse_engine_seq'),
      );
      assert.equal(sample(afterOrders, 'bourse_open_orders', { market: 'btc_usdt' }), 2, '5 bids, 3 filled');
      assert.equal(sample(afterOrders, 'bourse_book_levels', { market: 'btc_usdt', side: 'bid' }), 1);
      assert.equal(sample(afterOrders, 'bourse_book_amount', { market: 'btc_usdt', side: 'bid' }), 0.02);
      assert.equal(sample(afterOrders, 'bourse_ws_connections'), 1);
      assert.equal(sample(afterOrders, 'bourse_ready'), 1);
      watcher.ws.close();

      const refusal = await until('the refused signature in the log', () =>
        logLines(server.output()).find((l) => l['result'] === 'AUTH_FAILED'),
      );
      assert.equal(refusal['level'], 'warn');
      assert.equal(refusal['component'], 'auth');
      assert.equal(refusal['accessKey'], buyer.accessKey);
      const lines = logLines(server.output());
      assert.equal(
        lines.filter((l) => l['result'] === 'INSUFFICIENT_BALANCE').length,
        0,
        'a business refusal is below the default level',
      );
      const adminLines = lines.filter(
        (l) => l['component'] === 'admin' && l['path'] === '/admin/users/create',
      );
      assert.equal(adminLines.length, 2, 'each admin action is logged');
      assert.deepEqual(adminLines[0]?.['params'], { name: 'buyer' });
      assert.equal(adminLines[0]?.['code'], 1000);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const last = logLines(server.output()).slice(-2);
    assert.deepEqual(
      last.map((l) => l['msg']),
      ['stopping: SIGTERM', 'stopped'],
    );
  });

  test('--log-level=warn writes nothing below warn; a warn still shows', async () => {
    const server = await startServer(dataDir(), ['--log-level', 'warn']);
    try {
      const forger = new ZbClient(server.base, 'no-such-key', 'secret');
      assert.equal((await forger.call('getAccountInfo'))['code'], 1003);
      await until('the refusal in the log', () =>
        logLines(server.output()).find((l) => l['result'] === 'AUTH_FAILED'),
      );
      const levels = new Set(logLines(server.output()).map((l) => l['level']));
      assert.deepEqual(
        [...levels].filter((l) => l !== 'warn' && l !== 'error'),
        [],
        [...levels].join(),
      );
    } finally {
      await server.stop();
    }
  });

  test('a journal that fails (disk full) stops the server, its reason logged once at fatal', async () => {
    const server = await startServer(dataDir(), [], {}, [
      '--import',
      join(ROOT, 'test', 'fixtures', 'fail-journal.ts'),
    ]);
    const code = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
    // A first command opens the journal's first segment file.
    assert.equal(
      (await admin(server.adminBase, server.token, '/admin/users/create', [['name', 'a']]))['code'],
      1000,
    );
    server.child.kill('SIGUSR2');
    await until('the segment swapped for /dev/full', () =>
      server.output().includes('fail-journal: fd') ? true : undefined,
    );
    await admin(server.adminBase, server.token, '/admin/users/create', [['name', 'b']]).catch(
      () => undefined,
    );
    assert.equal(await code, 1);
    const lines = logLines(server.output());
    const fatal = lines.filter((l) => l['level'] === 'fatal');
    assert.equal(fatal.length, 1, JSON.stringify(lines));
    assert.match(
      fatal[0]?.['reason'] as string,
      /^journal failed after durable seq \d+: .*(ENOSPC|no space left)/,
    );
    assert.match(
      fatal[0]?.['msg'] as string,
      /^stopping: journal failed .*a restart recovers from the journal$/,
    );
    const repeats = lines.filter(
      (l) => l['level'] !== 'fatal' && JSON.stringify(l).includes(fatal[0]?.['reason'] as string),
    );
    assert.deepEqual(repeats, [], 'said once');
  });

  test('while a long journal replays, the admin listener answers /health (alive) and /ready (503, with progress)', async () => {
    const data = dataDir();
    const first = await startServer(data);
    assert.equal(await first.stop(), 0);
    // Many commands for the next start to replay (and write to the history store).
    const journal = FileJournal.open(join(data, 'journal'), { fsync: false });
    const time = Date.now();
    for (let seq = journal.lastSeq + 1, i = 0; i < 30_000; seq++, i++) {
      journal.append(seq, encodeCommand({ type: 'RegisterUser', name: `user${i}`, seq, time }));
    }
    await journal.close();

    const child = spawnNode(
      [join(ROOT, 'src', 'main.ts'), '--data', data, '--port', '0', '--admin-port', '0'],
      { env: { XDG_CONFIG_HOME: join(data, '..', 'config') } },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    try {
      const adminUrl = await until('the admin listener', () => {
        const line = logLines(output).find((l) => l['component'] === 'admin' && 'admin' in l);
        return (line?.['admin'] as { url: string } | undefined)?.url;
      });
      const seen = new Set<string>();
      let recovering: Record<string, unknown> | undefined;
      await until(
        'readiness',
        async () => {
          const ready = await json(`${adminUrl}/ready`);
          const alive = await json(`${adminUrl}/health`);
          assert.equal(alive.status, 200);
          seen.add(`${ready.status} ${String(ready.body['phase'])}`);
          if (ready.status === 503 && ready.body['phase'] === 'recovering') {
            recovering ??= ready.body;
            // The admin routes answer 503 until recovery ends (it may have ended since).
            const state = await get(`${adminUrl}/admin/state`);
            if (state.status === 503) assert.equal((JSON.parse(state.text) as { code: number }).code, 4001);
          }
          return ready.status === 200 ? true : undefined;
        },
        120_000,
      );
      assert.ok(seen.has('503 recovering'), [...seen].join());
      assert.equal((recovering?.['checks'] as { recovered: { ok: boolean } }).recovered.ok, false);
      assert.ok(logLines(output).some((l) => /^replay 30000\/30000 \(100%\)/.test(l['msg'] as string)));
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
