import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import type { Command } from '../../domain/commands.ts';
import { Engine } from '../../engine/engine.ts';
import { MAX_CLOCK_ADVANCE_MS, ManualClock } from '../../sequencer/manual-clock.ts';
import { SpeedClock } from '../../sequencer/speed-clock.ts';
import type { HistoryStore } from '../../store/history-store.ts';
import type { ApiReply, ApiRequest, Route, VenuePort } from '../http/types.ts';
import { adminRoutes } from './admin-routes.ts';
import { parseDuration } from './sandbox-routes.ts';

const TOKEN = 'b'.repeat(64);
const START = 1_700_000_000_000;

/**
 * The admin routes over a real engine whose commands are stamped from a manual clock (or the wall
 * clock); with `speed`, from a speed clock (10 times a wall clock that moves with `speed.wall`).
 */
function setUp(manual = true, speed?: { wall: number; rearmed: number }) {
  const engine = new Engine(DEFAULT_VENUE);
  const clock = speed === undefined ? new ManualClock(START) : new SpeedClock(START, 10, () => speed.wall);
  let seq = 0;
  const venue: VenuePort = {
    engine,
    history: undefined as unknown as HistoryStore,
    now: clock.now,
    submit: (command: Command) =>
      Promise.resolve(engine.apply({ ...command, seq: ++seq, time: clock.now() })),
  };
  const routes = new Map<string, Route>(
    adminRoutes({
      venue,
      token: TOKEN,
      instance: 'i'.repeat(32),
      snapshot: () => Promise.resolve(undefined),
      funds: { chains: () => [], simulator: undefined, syncChains: () => Promise.resolve() },
      keys: { issue: () => ({ accessKey: 'k'.repeat(8), secretKey: 's', sealedSecret: 'x' }) },
      ...(clock instanceof SpeedClock
        ? {
            sandbox: {
              clock: {
                mode: 'speed',
                now: clock.now,
                advance: () => Promise.reject(new Error('not advanced')),
                speed: () => clock.speed,
                setSpeed: (n: number) =>
                  clock.setSpeed(n, {
                    submit: venue.submit,
                    rearmTimers: () => void (speed as { rearmed: number }).rearmed++,
                  }),
              },
              maxAdvanceMs: MAX_CLOCK_ADVANCE_MS,
            },
          }
        : manual
          ? {
              sandbox: {
                clock: {
                  mode: 'manual',
                  now: clock.now,
                  advance: (ms: number) => clock.advance(ms, venueClock),
                },
                maxAdvanceMs: MAX_CLOCK_ADVANCE_MS,
              },
            }
          : {}),
    }).map((r) => [r.path, r]),
  );
  const venueClock = { nextDeadline: () => engine.nextDeadline(), submit: venue.submit };
  const call = async (path: string, form: [string, string][] = [], token = TOKEN) => {
    const request: ApiRequest = {
      method: 'POST',
      path,
      params: form.map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
      ip: '127.0.0.1',
      headers: { authorization: `Bearer ${token}` },
      receivedAt: 0,
    };
    const reply: ApiReply = await (routes.get(path) as Route).handler(request);
    return ('json' in reply ? reply.json : {}) as Record<string, unknown>;
  };
  const must = (command: Command): void =>
    assert.equal(engine.apply({ ...command, seq: ++seq, time: clock.now() }).result, 'OK');
  return { engine, clock, call, must };
}

const stateOf = (engine: Engine): string => JSON.stringify({ ...engine.snapshot(), lastSeq: 0 });

describe('sandbox admin routes', () => {
  test('durations', () => {
    assert.equal(parseDuration('1h'), 3_600_000);
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('2d'), 172_800_000);
    assert.equal(parseDuration('1w1d'), 691_200_000);
    for (const bad of [
      '',
      '1',
      'h',
      '-1h',
      '1.5h',
      '1 h',
      '1h1h',
      '0s',
      '1y',
      '99999999999999999w',
      'x'.repeat(41),
    ])
      assert.equal(parseDuration(bad), undefined, bad);
  });

  test('every route needs the admin token', async () => {
    const { call } = setUp();
    for (const path of [
      '/admin/demo/status',
      '/admin/demo/stop',
      '/admin/demo/faucet',
      '/admin/clock',
      '/admin/clock/advance',
    ])
      assert.equal((await call(path, [], 'wrong')).code, 1003, path);
  });

  test('demo status, faucet and stop', async () => {
    const { engine, call, must } = setUp();
    must({ type: 'RegisterUser', name: 'demo-trader' });
    must({ type: 'RegisterUser', name: 'alice' });
    must({ type: 'StartDemo', faucet: [{ coin: 'usdt', perHour: 1_000_000_000 }] });
    must({ type: 'MarkDemoUser', userId: 1 });
    assert.deepEqual(await call('/admin/demo/status'), {
      code: 1000,
      message: 'success',
      started: true,
      stopped: false,
      users: ['demo-trader'],
      faucet: [{ coin: 'usdt', perHour: '1000' }],
    });
    const credited = await call('/admin/demo/faucet', [
      ['user', 'demo-trader'],
      ['coin', 'USDT'],
      ['amount', '250'],
    ]);
    assert.equal(credited.code, 1000);
    assert.equal(credited.available, '250');
    assert.match(String(credited.depositId), /^faucet:/);

    const before = stateOf(engine);
    const refusals: [[string, string][], number, RegExp][] = [
      [
        [
          ['user', 'nobody'],
          ['coin', 'usdt'],
          ['amount', '1'],
        ],
        3004,
        /no user named/,
      ],
      [
        [
          ['user', 'alice'],
          ['coin', 'usdt'],
          ['amount', '1'],
        ],
        1012,
        /demo users only/,
      ],
      [
        [
          ['user', 'demo-trader'],
          ['coin', 'doge'],
          ['amount', '1'],
        ],
        3005,
        /unknown coin/,
      ],
      [
        [
          ['user', 'demo-trader'],
          ['coin', 'btc'],
          ['amount', '1'],
        ],
        3005,
        /gives no btc/,
      ],
      [
        [
          ['user', 'demo-trader'],
          ['coin', 'usdt'],
          ['amount', 'lots'],
        ],
        3003,
        /positive decimal/,
      ],
      [
        [
          ['user', 'demo-trader'],
          ['coin', 'usdt'],
          ['amount', '751'],
        ],
        1001,
        /750 left until/,
      ],
    ];
    for (const [form, code, message] of refusals) {
      const r = await call('/admin/demo/faucet', form);
      assert.equal(r.code, code, JSON.stringify(form));
      assert.match(String(r.message), message);
    }
    assert.equal(stateOf(engine), before);

    assert.deepEqual(await call('/admin/demo/stop'), { code: 1000, message: 'success', duplicate: false });
    assert.equal((await call('/admin/demo/stop')).duplicate, true);
    assert.equal(engine.demo.stopped, true);
  });

  test('demo stop on a venue that never had the demo is refused', async () => {
    const { call } = setUp();
    const r = await call('/admin/demo/stop');
    assert.equal(r.code, 3005);
    assert.match(String(r.message), /never started/);
  });

  test('clock: show and advance; the dead-man switch fires on the way', async () => {
    const { engine, clock, call, must } = setUp();
    assert.deepEqual(await call('/admin/clock'), {
      code: 1000,
      message: 'success',
      mode: 'manual',
      time: START,
      iso: new Date(START).toISOString(),
    });
    must({ type: 'RegisterUser', name: 'alice' });
    must({ type: 'CancelAllOrdersAfter', userId: 1, market: 'btc_usdt' });
    const r = await call('/admin/clock/advance', [['by', '1h']]);
    assert.equal(r.code, 1000);
    assert.equal(r.time, START + 3_600_000);
    assert.equal(r.from, START);
    assert.equal(r.timerSteps, 1);
    assert.equal(engine.nextDeadline(), undefined, 'the switch fired');
    assert.equal(clock.now(), START + 3_600_000);

    const before = stateOf(engine);
    for (const by of ['', 'soon', '-1h', '1.5h', '367d', '0s', '90']) {
      const refused = await call('/admin/clock/advance', [['by', by]]);
      assert.equal(refused.code, 3005, by);
      // The person's words (`bourse clock advance 90`), not the form field's name.
      assert.doesNotMatch(String(refused.message), /\bby\b/, by);
    }
    assert.equal(
      (await call('/admin/clock/advance', [['by', '90']])).message,
      "'90' is not a duration: give a number with its unit, such as 30s, 15m, 1h, 1h30m, 2d or 1w (ms s m h d w), from 1 ms to 366 days",
    );
    assert.match(String((await call('/admin/clock/advance', [])).message), /^no duration given: /);
    assert.equal(clock.now(), START + 3_600_000);
    assert.equal(stateOf(engine), before);
  });

  test('on the wall clock, advancing is refused', async () => {
    const { call } = setUp(false);
    assert.equal((await call('/admin/clock')).mode, 'real');
    const r = await call('/admin/clock/advance', [['by', '1h']]);
    assert.equal(r.code, 3005);
    assert.match(String(r.message), /--clock=manual/);
  });

  test('clock speed: shown, changed (journaling the time reached), bad speeds refused changing nothing', async () => {
    const speed = { wall: 0, rearmed: 0 };
    const { engine, clock, call } = setUp(true, speed);
    speed.wall = 1_000; // a wall second: ten venue seconds
    assert.deepEqual(await call('/admin/clock'), {
      code: 1000,
      message: 'success',
      mode: 'speed',
      time: START + 10_000,
      iso: new Date(START + 10_000).toISOString(),
      speed: 10,
    });
    const r = await call('/admin/clock/speed', [['speed', '1000']]);
    assert.equal(r.code, 1000);
    assert.equal(r.speed, 1000);
    assert.equal(r.from, 10);
    assert.equal(engine.lastSeq, 1, 'a FireTimers journals the time of the change');
    assert.equal(speed.rearmed, 1, 'the timers are re-armed at the new speed');
    speed.wall = 1_001;
    assert.equal(clock.now(), START + 10_000 + 1_000, 'a wall millisecond is a venue second');

    const before = stateOf(engine);
    for (const bad of ['', '0', '-1', 'abc', '1e3', '0.0001', '1000001', '1.2345', ' 5']) {
      const refused = await call('/admin/clock/speed', [['speed', bad]]);
      assert.equal(refused.code, 3005, bad);
      assert.match(
        String(refused.message),
        /(is not a speed|no speed given): give how many times faster/,
        bad,
      );
    }
    assert.equal((await call('/admin/clock')).speed, 1000);
    assert.equal(stateOf(engine), before);
    // A speed clock is not advanced, and a manual one has no speed.
    assert.match(String((await call('/admin/clock/advance', [['by', '1h']])).message), /a speed clock/);
    assert.match(
      String((await setUp().call('/admin/clock/speed', [['speed', '10']])).message),
      /manual clock: only a venue started with --clock=speed:<n>/,
    );
    assert.match(
      String((await setUp(false).call('/admin/clock/speed', [['speed', '10']])).message),
      /wall clock: only a venue started with --clock=speed:<n>/,
    );
  });
});
