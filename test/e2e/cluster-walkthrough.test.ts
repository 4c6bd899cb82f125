/**
 * docs/scale-out.md's "From the embedded default to a cluster, and back" as written (issue 31: every
 * walk-through of docs/ runs), on a venue started as the README starts it (the demo market, in a
 * temporary directory): its commands taken from the doc, their `…` filled with this test's NATS,
 * PostgreSQL and Redis. The venue stops, its journal moves to a stream, `bourse engine`,
 * `bourse history` and a `bourse gateway` serve it (the trades the history process wrote to
 * PostgreSQL, read through the gateway), then everything stops (exit 0) and the venue goes back to
 * files and one process, on the same PostgreSQL store. test/e2e/readme.test.ts runs the other
 * walk-throughs.
 * Skipped, as the JetStream, PostgreSQL and Redis tests are, where one of them cannot be had.
 */
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { bourseJson, runBourse } from '../fixtures/cli.ts';
import { natsSkipReason, startNatsServer, type NatsServer } from '../fixtures/nats-server.ts';
import { createTestDatabase, pgSkipReason, type TestDatabase } from '../fixtures/postgres.ts';
import { dropPrefix, redisSkipReason, TEST_REDIS_URL, testPrefix } from '../fixtures/redis-server.ts';
import { startRole, type RoleProcess } from '../fixtures/role-process.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { until } from '../fixtures/until.ts';
import { TEST_USER_AGENT } from '../fixtures/zb-client.ts';

fileTimeLimit(import.meta.url);

const ROOT = join(import.meta.dirname, '..', '..');
const SCALE_OUT = readFileSync(join(ROOT, 'docs', 'scale-out.md'), 'utf8');
const skip = natsSkipReason() || (await pgSkipReason()) || (await redisSkipReason());

const root = mkdtempSync(join(tmpdir(), 'bourse-cluster-walk-'));
const dataDir = join(root, 'data');
const running: { stop(): Promise<unknown> }[] = [];
let nats: NatsServer | undefined;
let database: TestDatabase | undefined;
const prefix = testPrefix();

after(async () => {
  for (const part of running.reverse()) await part.stop().catch(() => undefined);
  await nats?.stop();
  await database?.drop().catch(() => undefined);
  await dropPrefix(prefix).catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
});

/** The section's first inline command with flags that starts with `start` (it may span lines), spaces collapsed. */
function command(section: string, start: string): string {
  const found = [...section.matchAll(/`([^`]+)`/g)]
    .map((m) => (m[1] as string).replace(/\s+/g, ' ').trim())
    .find((c) => c.startsWith(start) && c.includes(' --'));
  assert.ok(found !== undefined, `no \`${start}…\` in the section`);
  return found;
}

/**
 * The arguments of a command as written, after its first `words`: `<…>` is one argument, quotes
 * are a shell's, and a value with `…` in it is what `fill` gives for its flag.
 */
function argv(text: string, words: number, fill: Record<string, string>): string[] {
  const tokens = [...text.matchAll(/<[^>]*>|'[^']*'|\S+/g)].map((m) => m[0].replace(/^'(.*)'$/, '$1'));
  const args = tokens.slice(words);
  return args.map((arg, i) => {
    if (!arg.includes('…') && !arg.startsWith('<')) return arg;
    const flag = args[i - 1] as string;
    const value = fill[flag];
    assert.ok(value !== undefined, `nothing to put in for ${flag} ${arg}`);
    return value;
  });
}

const json = async (url: string): Promise<Record<string, unknown>> =>
  (await (await fetch(url, { headers: { 'user-agent': TEST_USER_AGENT } })).json()) as Record<
    string,
    unknown
  >;

describe('docs/scale-out.md: from the embedded default to a cluster, and back, as written', { skip }, () => {
  test('stop, move the journal, engine + history + gateway on NATS, PostgreSQL and Redis; then one process again', async () => {
    const from = SCALE_OUT.indexOf('\n## From the embedded default to a cluster, and back\n');
    const section = SCALE_OUT.slice(from, SCALE_OUT.indexOf('\n## ', from + 1));
    const copyTo = command(section, 'bourse journal copy --to');
    const engine = command(section, 'bourse engine');
    const history = command(section, 'bourse history');
    const gateway = command(section, 'bourse gateway');
    const back = command(section, 'bourse journal copy --to file');
    assert.match(
      section,
      /`npm start` on the data directory: with `--history-url` it goes on writing the same PostgreSQL/,
    );

    // The README's venue, with some history.
    let venue: ServerProcess | undefined = await startServer(dataDir, ['--demo']);
    running.push(venue);
    const base = venue.base;
    await until(
      'the demo trades',
      async () =>
        ((await json(`${base}/data/v1/trades?market=btc_usdt`)) as unknown as unknown[]).length > 0
          ? true
          : undefined,
      60_000,
    );
    // 1. NATS, PostgreSQL and Redis.
    nats = await startNatsServer();
    database = await createTestDatabase();
    const journalUrl = `${nats.url}?stream=BOURSE_JOURNAL&monitor=${nats.monitorUrl}`;
    const historyUrl = `${database.url}?schema=history`;
    const limitsUrl = `${TEST_REDIS_URL}?prefix=${encodeURIComponent(prefix)}`;
    const config = join(root, 'config', 'bourse');
    const keyFile = join(config, readdirSync(config).find((f) => f.startsWith('master-')) as string);
    const fill: Record<string, string> = {
      '--to': journalUrl,
      '--journal-url': journalUrl,
      '--history-url': historyUrl,
      '--limits-url': limitsUrl,
      '--master-key-file': keyFile,
      '--port': '0',
    };
    // 2. Stop the venue (a clean stop: exit 0) and move the journal into the stream.
    assert.equal(await venue.stop(), 0);
    running.pop();
    venue = undefined;
    const copied = await runBourse([...argv(copyTo, 1, fill), '--data', dataDir]);
    assert.equal(copied.code, 0, copied.err);
    const records = Number(/journal copy: (\d+) records/.exec(copied.out)?.[1]);
    assert.ok(records > 0, copied.out);
    // 3. Nothing: the history process fills the empty schema from the stream.
    // 4. The engine on the stream (its own flags from the doc; `--data ./data` is this venue's).
    const engineArgs = argv(engine, 2, { ...fill, '--data': dataDir }).filter(
      (a, i, all) => a !== '--data' && all[i - 1] !== '--data',
    );
    const leader = await startServer(
      dataDir,
      engineArgs,
      {},
      [],
      join(ROOT, 'src', 'cluster', 'engine-role.ts'),
    );
    running.push(leader);
    // 5. The history process and a gateway, each on a copy of venue.json (the gateway's with the snapshots).
    const historyDir = join(root, 'history');
    const gatewayDir = join(root, 'gateway');
    for (const dir of [historyDir, gatewayDir]) {
      mkdirSync(dir);
      copyFileSync(join(dataDir, 'venue.json'), join(dir, 'venue.json'));
    }
    cpSync(join(dataDir, 'snapshots'), join(gatewayDir, 'snapshots'), { recursive: true, force: true });
    const writer: RoleProcess = await startRole(
      'history',
      argv(history, 2, { ...fill, '--data': historyDir }),
    );
    running.push(writer);
    const edge: RoleProcess = await startRole('gateway', argv(gateway, 2, { ...fill, '--data': gatewayDir }));
    running.push(edge);
    // The gateway serves the venue, its trades read from PostgreSQL as the history process wrote them.
    await until(
      'the history written to PostgreSQL, read through the gateway',
      async () =>
        ((await json(`${edge.ready}/data/v1/trades?market=btc_usdt`)) as unknown as unknown[]).length > 0
          ? true
          : undefined,
      60_000,
    );
    const onStream = await bourseJson(['state', '--data', dataDir]);
    assert.ok(Number(onStream['lastSeq']) >= records, JSON.stringify(onStream));

    // Back to one process: stop the gateways, the history process and the engine (SIGTERM: exit 0).
    for (const part of [edge, writer, leader]) {
      assert.equal(await part.stop(), 0);
      running.splice(running.indexOf(part), 1);
    }
    const returned = await runBourse([...argv(back, 1, fill), '--data', dataDir]);
    assert.equal(returned.code, 0, returned.err);
    venue = await startServer(dataDir, ['--history-url', historyUrl]);
    running.push(venue);
    const onFiles = await bourseJson(['state', '--data', dataDir]);
    assert.ok(Number(onFiles['lastSeq']) >= Number(onStream['lastSeq']), JSON.stringify(onFiles));
    assert.ok(
      ((await json(`${venue.base}/data/v1/trades?market=btc_usdt`)) as unknown as unknown[]).length > 0,
    );
  });
});
