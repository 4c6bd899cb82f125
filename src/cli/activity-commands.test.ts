import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findCommand, type AdminCall } from './commands.ts';

function callOf(words: string[], flags: [string, string][] = []): AdminCall | string {
  const found = findCommand(words);
  assert.ok(found !== undefined, words.join(' '));
  const values = new Map<string, string[]>();
  for (const [k, v] of flags) values.set(k, [...(values.get(k) ?? []), v]);
  return found.command.call?.(found.args, values) as AdminCall | string;
}

describe('bourse deposits and bourse trades', () => {
  test('the calls they make: filters and a UTC date range as from and to', () => {
    const deposits = callOf(
      ['deposits'],
      [
        ['--user', 'alice'],
        ['--coin', 'usdt'],
        ['--status', 'credited'],
        ['--since', '2026-12-01'],
        ['--until', '2026-12-01'],
        ['--limit', '5'],
      ],
    ) as AdminCall;
    assert.equal(deposits.path, '/admin/deposits/list');
    assert.deepEqual(deposits.form, [
      ['user', 'alice'],
      ['coin', 'usdt'],
      ['status', 'credited'],
      ['from', String(Date.parse('2026-12-01T00:00:00Z'))],
      ['to', String(Date.parse('2026-12-02T00:00:00Z') - 1)],
      ['limit', '5'],
    ]);
    const trades = callOf(['trades'], [['--market', 'btc_usdt']]) as AdminCall;
    assert.deepEqual([trades.path, trades.form], ['/admin/trades/list', [['market', 'btc_usdt']]]);
    assert.equal(
      callOf(['trades'], [['--since', 'yesterday']]),
      "--since 'yesterday' must be a UTC date, YYYY-MM-DD",
    );
  });

  test('what a person reads', () => {
    const deposits = callOf(['deposits']) as AdminCall;
    const shown = deposits.show({
      total: 1,
      offset: 0,
      deposits: [
        {
          time: 0,
          user: 'alice',
          coin: 'usdt',
          chain: '',
          amount: '30',
          status: 'credited',
          txHash: '',
          note: 'operator credit',
        },
      ],
    });
    assert.match(shown, /^time +user +coin +chain +amount +status +transaction +note$/m);
    assert.match(shown, /^1970-01-01 00:00:00Z +alice +usdt +— +30 +credited +— +operator credit$/m);
    assert.match(shown, /deposits 1–1 of 1$/);
    const trades = callOf(['trades']) as AdminCall;
    assert.equal(trades.show({ total: 0, offset: 0, trades: [] }), 'no trades');
    const row = { time: 0, market: 'btc_usdt', price: '1', amount: '1', value: '1', takerSide: 'buy' };
    const capped = trades.show({
      total: 10000,
      capped: true,
      offset: 0,
      trades: [{ ...row, taker: 'a', maker: 'b' }],
    });
    assert.match(capped, /^more than 10000 trades match: narrow with --market, --user, --since or --until\n/);
  });
});
