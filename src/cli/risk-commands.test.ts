import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { callRoute, liquidatedVenue } from '../../test/fixtures/liquidation-venue.ts';
import { riskAdminRoutes } from '../api/admin/risk-routes.ts';
import { runCli, type OfflineCommands } from './bourse.ts';
import { findCommand, type AdminCall } from './commands.ts';

const offline: OfflineCommands = {
  verify: () => Promise.reject(new Error('not called')),
  rebuildHistory: () => Promise.reject(new Error('not called')),
  journalCopy: () => Promise.reject(new Error('not called')),
};

/** The call `bourse <argv>` makes (flags as the parser hands them). */
function callOf(words: string[], flags: [string, string][] = []): AdminCall | string {
  const found = findCommand(words);
  assert.ok(found !== undefined, words.join(' '));
  return found.command.call?.(found.args, new Map(flags.map(([k, v]) => [k, [v]]))) as AdminCall | string;
}

/** Runs the CLI with a command line that never reaches a server. */
async function usage(argv: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const code = await runCli(argv, { out: () => undefined, err: (l) => (err += `${l}\n`) }, offline, {
    BOURSE_DATA: '/nonexistent',
  });
  return { code, err };
}

describe('bourse liquidations and bourse insurance', () => {
  test('the admin calls they make, and what a person reads of a real liquidation', async () => {
    const routes = riskAdminRoutes({ venue: await liquidatedVenue() });
    const list = callOf(
      ['liquidations'],
      [
        ['--user', 'alice'],
        ['--status', 'done'],
        ['--limit', '5'],
      ],
    ) as AdminCall;
    assert.equal(list.path, '/admin/liquidations/list');
    assert.deepEqual(list.form, [
      ['user', 'alice'],
      ['status', 'done'],
      ['limit', '5'],
    ]);
    const listed = list.show(await callRoute(routes, list.path, list.form));
    assert.match(listed, /^ *id +began +account +status +mark +risk rate +repaid +shortfall +fee$/m);
    assert.match(
      listed,
      /1 +2023-11-14 22:13:20Z +alice isolated btcusdt +done +24049\.02 +1\.0733 +3000\.062500 usdt +0 +30\.000625 usdt/,
    );
    assert.match(listed, /liquidations 1–1 of 1$/);

    const one = callOf(['liquidations', '1']) as AdminCall;
    assert.deepEqual([one.path, one.form], ['/admin/liquidations/show', [['id', '1']]]);
    const shown = one.show(await callRoute(routes, one.path, one.form));
    assert.match(shown, /^liquidation 1 of alice isolated btcusdt \(user id 1\): done$/m);
    assert.match(shown, /began .* at mark 24049\.02, risk rate 1\.0733; ended /);
    assert.match(shown, /sell +23327\.55 +0\.12970000 +0\.12970000/);
    assert.match(shown, /usdt +3000\.062500 +0\.000000 +0\.000000 +0\.000000 +30\.000625/);

    const ins = callOf(['insurance', 'usdt']) as AdminCall;
    assert.deepEqual([ins.path, ins.form], ['/admin/insurance', [['coin', 'usdt']]]);
    const fund = ins.show(await callRoute(routes, ins.path, ins.form));
    assert.match(fund, /^liquidations: 1 \(0 running\)$/m);
    assert.match(fund, /usdt +30\.006875 +0\.00625 +30\.000625 +0 +0$/m);

    const none = callOf(['liquidations'], [['--status', 'running']]) as AdminCall;
    assert.equal(none.show(await callRoute(routes, none.path, none.form)), 'no liquidations');
  });

  test('bad command lines are refused before anything is sent', async () => {
    assert.match(
      String(callOf(['liquidations', '1'], [['--user', 'alice']])),
      /filter the list \(without an id\)/,
    );
    for (const [argv, problem] of [
      [['liquidations', '1', '2'], /one too many/],
      [['insurance', 'usdt', 'btc'], /one too many/],
      [['insurance', '--status', 'done'], /insurance does not take --status/],
      [['liquidations', '--market'], /--market needs a value/],
      [['liquidations', '--status', 'done', '--status', 'running'], /--status given twice/],
      [['liquidations', '7', '--limit', '3'], /filter the list/],
    ] as [string[], RegExp][]) {
      const r = await usage(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.err, problem, argv.join(' '));
    }
  });
});
