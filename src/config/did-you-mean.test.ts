import assert from 'node:assert/strict';
import { test } from 'node:test';
import { didYouMean, nearest } from './did-you-mean.ts';

test('the nearest known word to a typo, or nothing when none is near', () => {
  const flags = ['--port', '--host', '--data', '--admin-port', '--perms'];
  assert.equal(nearest('--prot', flags), '--port');
  assert.equal(nearest('--dat', flags), '--data');
  assert.equal(nearest('--admin-prt', flags), '--admin-port');
  assert.equal(nearest('--prems', flags), '--perms');
  assert.equal(nearest('--zzzzzz', flags), undefined);
  assert.equal(nearest('--x', flags), undefined);
  assert.equal(didYouMean('--prot', flags), ' (did you mean --port?)');
  assert.equal(didYouMean('--verbose', flags), '');
});
