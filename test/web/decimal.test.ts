import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decimalsOf, div, format, mul, parseDec, rescale } from '../../web/src/decimal.ts';

const d = (text: string) => parseDec(text) ?? assert.fail(text);

test("the order form's decimals are exact", () => {
  assert.equal(format(mul(d('30000.55'), d('0.0123'))), '369.006765');
  assert.equal(format(mul(d('0.1'), d('0.2'))), '0.02');
  assert.equal(format(div(d('1000'), d('30000.55'), 4) ?? assert.fail()), '0.0333');
  assert.equal(format(div(d('0.02'), d('0.2'), 2) ?? assert.fail()), '0.10');
  assert.equal(div(d('1'), d('0'), 4), undefined);
  assert.equal(format(rescale(d('0.000021'), 5, true)), '0.00003');
  assert.equal(format(rescale(d('0.000020'), 5, true)), '0.00002');
  assert.equal(format(rescale(d('12.5'), 3)), '12.500');
  assert.equal(format(d('0.5'), 0), '0');
  assert.equal(decimalsOf('0.120'), 3);
  assert.equal(decimalsOf('12'), 0);
  for (const bad of ['', '-1', '1e3', '.5', '1.', 'abc', '1.2.3', '0x10'])
    assert.equal(parseDec(bad), undefined, bad);
});
