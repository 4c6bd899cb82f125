import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textFrame } from './frame.ts';

test('text frames: FIN + text opcode, unmasked, with the 7-, 16- and 64-bit length forms', () => {
  const small = textFrame('{"a":"é"}');
  assert.deepEqual([...small.subarray(0, 2)], [0x81, 10]);
  assert.equal(small.subarray(2).toString('utf8'), '{"a":"é"}');

  const medium = textFrame('x'.repeat(126));
  assert.deepEqual([...medium.subarray(0, 4)], [0x81, 126, 0, 126]);
  assert.equal(medium.length, 130);

  const large = textFrame('y'.repeat(70_000));
  assert.equal(large[1], 127);
  assert.equal(large.readBigUInt64BE(2), 70_000n);
  assert.equal(large.length, 70_010);
});
