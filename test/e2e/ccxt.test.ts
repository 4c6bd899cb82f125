/**
 * End to end: the real server, driven by the unchanged `zb` adapter of ccxt 2.9.16 with only its
 * API URLs pointed at Bourse (the suite: test/e2e/ccxt-suite.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { BTC_USDT, describeCcxtZb } from './ccxt-suite.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-ccxt-'));
let server: ServerProcess;

before(async () => {
  server = await startServer(join(root, 'data'));
});

after(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describeCcxtZb(
  'ccxt zb adapter against Bourse',
  () => ({ base: server.base, venue: server, settled: () => Promise.resolve() }),
  { users: '', market: BTC_USDT },
);
