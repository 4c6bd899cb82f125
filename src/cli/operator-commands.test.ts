import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { callRoute } from '../../test/fixtures/liquidation-venue.ts';
import { operatorRoutes } from '../api/admin/operator-routes.ts';
import { MemoryOperatorStore, OperatorAccess } from '../api/admin/operators.ts';
import { findCommand, type AdminCall } from './commands.ts';

function callOf(words: string[], flags: string[] = []): AdminCall {
  const found = findCommand(words);
  assert.ok(found !== undefined, words.join(' '));
  return found.command.call?.(found.args, new Map(flags.map((f) => [f, ['']]))) as AdminCall;
}

describe('bourse operator list | add | remove', () => {
  test('the calls they make, and what a person reads', async () => {
    const routes = operatorRoutes(
      new OperatorAccess({ bootstrapToken: 't'.repeat(64), store: new MemoryOperatorStore() }),
    );
    const run = async (call: AdminCall): Promise<string> =>
      call.show(await callRoute(routes, call.path, call.form));

    const empty = callOf(['operator', 'list']);
    assert.match(await run(empty), /^no named operators yet .*bourse operator add$/);

    const add = callOf(['operator', 'add', 'otto', 'operator']);
    assert.deepEqual(add.form, [
      ['name', 'otto'],
      ['role', 'operator'],
    ]);
    const added = await run(add);
    assert.match(added, /^operator otto \(operator\)\ntoken \(shown once\): [0-9a-f]{64}\n/);
    assert.match(added, /^TOTP secret \(shown once, for the authenticator app\): [A-Z2-7]{32}$/m);
    assert.match(added, /^otpauth address: otpauth:\/\/totp\/Bourse:otto\?secret=/m);
    const viewer = await run(callOf(['operator', 'add', 'vera', 'viewer']));
    assert.match(viewer, /second factor: none \(a viewer moves no money\)$/);
    assert.deepEqual(callOf(['operator', 'add', 'otto', 'admin'], ['--replace']).form.at(-1), [
      'replace',
      'true',
    ]);

    const listed = await run(empty);
    assert.match(listed, /^operator +role +second factor +created$/m);
    assert.match(listed, /^otto +operator +TOTP +\d{4}-/m);
    assert.match(listed, /^vera +viewer +none +\d{4}-/m);

    assert.equal(await run(callOf(['operator', 'remove', 'vera'])), 'operator vera removed');
  });

  test('bourse audit names who did each action', () => {
    const audit = callOf(['audit']);
    const shown = audit.show({
      total: 2,
      limit: 50,
      offset: 0,
      entries: [
        {
          id: 2,
          time: 0,
          operator: 'otto',
          action: 'users/freeze',
          params: { user: 'alice' },
          code: 1000,
          commands: [],
        },
        { id: 1, time: 0, action: 'users/create', params: { name: 'alice' }, code: 1000, commands: [] },
      ],
    });
    assert.match(shown, /^ *# +time +operator +action +parameters/m);
    assert.match(shown, /^ *2 +[0-9-]+ [0-9:]+Z +otto +users\/freeze +user=alice +ok/m);
    assert.match(shown, /^ *1 +[0-9-]+ [0-9:]+Z +— +users\/create/m);
  });
});
