import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineDriver } from '../../test/fixtures/engine-driver.ts';
import { decideDemo } from './demo-market.ts';

const ASKED = { run: true } as const;

test('asked for, the demo runs on a fresh venue, or one whose demo runs; else it says why not', () => {
  const fresh = new EngineDriver().engine;
  assert.deepEqual(decideDemo(fresh, ASKED), { run: true });
  const off = { run: false, reason: 'demo off (--demo=false)' } as const;
  assert.deepEqual(decideDemo(fresh, off), off);

  const history = new EngineDriver();
  history.user('alice');
  assert.match((decideDemo(history.engine, ASKED) as { reason: string }).reason, /history without it/);

  const running = new EngineDriver();
  running.apply({ type: 'StartDemo', faucet: [] });
  running.user('demo-maker-btc_usdt');
  assert.deepEqual(decideDemo(running.engine, ASKED), { run: true });
  running.apply({ type: 'StopDemo' });
  assert.match((decideDemo(running.engine, ASKED) as { reason: string }).reason, /stopped for good/);
});
