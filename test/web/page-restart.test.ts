/**
 * Browser test of a signed-in page across restarts (issue 31): the page stays open while the
 * venue on its address stops and starts. The same demo data directory started again keeps the
 * demo trader's key, so the page stays signed in and its calls work; a fresh venue on the same
 * address does not know the key, and the page signs out saying why (its private subscriptions are
 * refused with 1003 when the feed reconnects). Every server and the browser are stopped on every path.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { browserSkip, demoTraderKey } from '../fixtures/browser-venue.ts';
import { CHROMIUM, launchChromium } from '../fixtures/chromium.ts';
import { startServer, type ServerProcess } from '../fixtures/server-process.ts';
import { ensureWebBuilt } from '../fixtures/web-build.ts';

/** A port free now (the venues take it in turn). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a signed-in page across restarts of the venue (issue 31)', { skip: browserSkip }, () => {
  const roots: string[] = [];
  const servers: ServerProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups) await c().catch(() => undefined);
    for (const s of servers) await s.kill();
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });
  const start = async (dir: string, port: number): Promise<ServerProcess> => {
    const server = await startServer(dir, ['--demo', '--port', String(port)]);
    servers.push(server);
    return server;
  };
  const dataDir = (): string => {
    const root = mkdtempSync(join(tmpdir(), 'bourse-page-restart-'));
    roots.push(root);
    return join(root, 'data');
  };

  test('the same demo directory keeps the page signed in; a fresh venue signs it out, saying why', async () => {
    ensureWebBuilt();
    const port = await freePort();
    const dir = dataDir();
    let server = await start(dir, port);
    const key = await demoTraderKey(server);
    const { context, dir: profile } = await launchChromium(CHROMIUM);
    cleanups.push(async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    });
    const page = await context.newPage();
    await page.goto(`${server.base}/`);
    await page.waitForSelector('#feed-status.live');
    await page.fill('#access-key', key.accessKey);
    await page.fill('#secret-key', key.secret);
    await page.click('#sign-in button[type="submit"]');
    await page.waitForSelector('#user-name:has-text("demo-trader")');

    // The same data directory again: the same key, the page still signed in, its calls answered.
    assert.equal(await server.stop(), 0);
    await page.waitForSelector('#feed-status:not(.live)');
    server = await start(dir, port);
    assert.deepEqual(await demoTraderKey(server), key, 'the demo trader keeps its key');
    await page.waitForSelector('#feed-status.live', { timeout: 30_000 });
    await page.click('#account-tabs button[data-tab="bills"]');
    await page.locator('#bills tbody tr', { hasText: 'deposit' }).first().waitFor();
    assert.equal(await page.isVisible('#signed-in'), true);

    // A fresh venue on the same address: the key is unknown there.
    assert.equal(await server.stop(), 0);
    await page.waitForSelector('#feed-status:not(.live)');
    server = await start(dataDir(), port);
    await page.waitForSelector('#sign-in', { state: 'visible', timeout: 30_000 });
    assert.match(
      (await page.textContent('#notice')) ?? '',
      /^Signed out: the venue no longer accepts this API key .*Sign in again with a current key \(code 1003\)\.$/,
    );
    assert.equal(await page.isVisible('#signed-in'), false);
    assert.equal(await server.stop(), 0);
  });
});
