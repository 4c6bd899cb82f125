import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findCommand, type AdminCall } from './commands.ts';

test('bourse lending fund <coin> <amount> --rate --days [--ref]: the admin call it makes', () => {
  const found = findCommand(['lending', 'fund', 'USDT', '100000']);
  assert.ok(found !== undefined);
  assert.deepEqual(found.args, ['USDT', '100000']);
  const flags = new Map([
    ['--rate', ['0.05']],
    ['--days', ['10']],
    ['--ref', ['pool-1']],
  ]);
  const call = found.command.call?.(found.args, flags) as AdminCall;
  assert.equal(call.path, '/admin/lending/fund');
  assert.deepEqual(call.form, [
    ['coin', 'usdt'],
    ['amount', '100000'],
    ['rate', '0.05'],
    ['days', '10'],
    ['ref', 'pool-1'],
  ]);
  assert.equal(
    call.show({ amount: '100000', coin: 'usdt', rate: '0.05', days: 10, fundingId: 'operator:pool-1' }),
    'lending pool funded with 100000 usdt, offered at 0.05 % a day for 10 days (operator:pool-1)',
  );
  assert.match(
    call.show({ duplicate: true, fundingId: 'operator:pool-1' }),
    /already applied: nothing changed/,
  );
  for (const missing of ['--rate', '--days']) {
    const partial = new Map([...flags].filter(([k]) => k !== missing));
    assert.match(String(found.command.call?.(found.args, partial)), /needs --rate <daily %> and --days/);
  }
});
