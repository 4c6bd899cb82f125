/** The console's formatting of the admin API's values (web/src/admin/format.ts): rates and times. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { percent, text, time } from '../../web/src/admin/format.ts';

test('a fee rate (a decimal fraction) shows as an exact percentage, a rebate negative', () => {
  const cases: [string, string][] = [
    ['0.002', '0.2%'],
    ['0.001', '0.1%'],
    ['0', '0%'],
    ['0.1', '10%'],
    ['0.25', '25%'],
    ['1', '100%'],
    ['-0.0005', '-0.05%'],
    ['0.000001', '0.0001%'],
  ];
  for (const [fraction, shown] of cases) assert.equal(percent(fraction), shown, fraction);
});

test('times are UTC to the second; nothing is a dash', () => {
  assert.equal(time(Date.UTC(2026, 10, 24, 7, 42, 17, 500)), '2026-11-24 07:42:17');
  for (const nothing of [null, undefined, 0, 'x', -1]) assert.equal(time(nothing), '–');
  assert.equal(text(null), '–');
  assert.equal(text(''), '–');
  assert.equal(text(0), '0');
});
