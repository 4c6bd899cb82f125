/**
 * SIGTERM while the server starts (issue 13): a process manager may stop a venue that is still
 * replaying its journal, or that has just written listen.json. The signal is not lost and does not
 * kill the process half-way: the venue stops cleanly once started (exit 0, lock released), and a
 * second signal ends it at once.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { encodeCommand } from '../../src/sequencer/command-codec.ts';
import { startServer } from '../fixtures/server-process.ts';
import { untilTrue } from '../fixtures/until.ts';
import { spawnNode } from '../fixtures/children.ts';
import { SIGNAL_REPEAT_MS } from '../../src/config/stop-signals.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const ROOT = join(import.meta.dirname, '..', '..');
const root = mkdtempSync(join(tmpdir(), 'bourse-stop-start-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A data directory whose next start replays `commands` journal records. */
async function longJournal(name: string, commands: number): Promise<string> {
  const data = join(root, name);
  const first = await startServer(data);
  assert.equal(await first.stop(), 0);
  const journal = FileJournal.open(join(data, 'journal'), { fsync: false });
  const time = Date.now();
  for (let seq = journal.lastSeq + 1, i = 0; i < commands; seq++, i++) {
    journal.append(seq, encodeCommand({ type: 'RegisterUser', name: `user${i}`, seq, time }));
  }
  await journal.close();
  return data;
}

function startChild(data: string): {
  exited: Promise<number | null>;
  output: () => string;
  kill: (s: NodeJS.Signals) => void;
} {
  const child = spawnNode(
    [join(ROOT, 'src', 'main.ts'), '--data', data, '--port', '0', '--admin-port', '0', '--demo=false'],
    { env: { XDG_CONFIG_HOME: join(data, '..', 'config') } },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return {
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    output: () => output,
    kill: (signal) => child.kill(signal),
  };
}

test('SIGTERM during the start-up replay stops the venue cleanly once it has started', async () => {
  const data = await longJournal('once', 30_000);
  const server = startChild(data);
  // The admin listener opens before the replay: the venue is starting, its handlers not yet those of a running one.
  await untilTrue('the start-up', () => server.output().includes('"component":"admin"'), 60_000);
  server.kill('SIGTERM');
  assert.equal(await server.exited, 0, server.output());
  assert.match(server.output(), /"msg":"stopping: SIGTERM, once the start-up has finished"/);
  assert.match(server.output(), /"msg":"stopped"/);
  assert.equal(existsSync(join(data, 'listen.json')), false, 'a clean stop removes listen.json');
  // The lock went with it: the next start works.
  const next = await startServer(data);
  assert.equal(await next.stop(), 0);
});

test('a second SIGTERM a second after the first, during the start-up, ends the process at once', async () => {
  // A longer replay: it must outlast the interval within which a repeat is the same request.
  const data = await longJournal('twice', 100_000);
  const server = startChild(data);
  await untilTrue('the start-up', () => server.output().includes('"component":"admin"'), 60_000);
  server.kill('SIGTERM');
  await untilTrue(
    'the first stop line',
    () => server.output().includes('once the start-up has finished'),
    60_000,
  );
  // The server noted the first one before it logged it: after this wait, a signal is a new request.
  await sleep(SIGNAL_REPEAT_MS);
  assert.doesNotMatch(server.output(), /"msg":"stopped"/, 'the replay ended before the second signal');
  server.kill('SIGTERM');
  assert.equal(await server.exited, 1, server.output());
  assert.match(server.output(), /"msg":"stopping at once: SIGTERM again"/);
  const next = await startServer(data);
  assert.equal(await next.stop(), 0);
});
