import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineDriver } from '../../test/fixtures/engine-driver.ts';
import { decideDemo } from './demo-market.ts';

test('the demo runs on a fresh loopback venue, or one whose demo runs; else it says why not', () => {
  const fresh = new EngineDriver().engine;
  assert.deepEqual(decideDemo(fresh, true, true), { run: true });
  assert.match((decideDemo(fresh, false, true) as { reason: string }).reason, /--demo=false/);
  assert.match((decideDemo(fresh, true, false) as { reason: string }).reason, /beyond loopback/);

  const history = new EngineDriver();
  history.user('alice');
  assert.match((decideDemo(history.engine, true, true) as { reason: string }).reason, /history without it/);

  const running = new EngineDriver();
  running.apply({ type: 'StartDemo', faucet: [] });
  running.user('demo-maker-btc_usdt');
  assert.deepEqual(decideDemo(running.engine, true, true), { run: true });
  running.apply({ type: 'StopDemo' });
  assert.match((decideDemo(running.engine, true, true) as { reason: string }).reason, /stopped for good/);
});
