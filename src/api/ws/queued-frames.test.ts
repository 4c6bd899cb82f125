import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueuedFrames } from './fan-out.ts';

const frames = ['a', 'bb', 'ccc', 'dddd'].map((s) => Buffer.from(s));

test('connections that got the same runs in the same order share one path and one joined buffer', () => {
  const root = new QueuedFrames(undefined, 0, 0);
  // Two connections on topics 0–1 (frames 0 and 1–2), a third on topic 1 then 2 (frames 1–2, 3).
  const one = root.followedBy(0, 1).followedBy(1, 3);
  const two = root.followedBy(0, 1).followedBy(1, 3);
  const three = root.followedBy(1, 3).followedBy(3, 4);
  assert.equal(one, two);
  assert.equal(one.count, 3);
  assert.equal(one.bytes(frames).toString(), 'abbccc');
  assert.equal(one.bytes(frames), two.bytes(frames), 'joined once');
  assert.equal(three.bytes(frames).toString(), 'bbcccdddd');
  assert.equal(three.count, 3);
});

test('a path of one frame writes that frame itself, uncopied', () => {
  const root = new QueuedFrames(undefined, 0, 0);
  assert.equal(root.followedBy(2, 3).bytes(frames), frames[2]);
  assert.equal(root.followedBy(0, 2).bytes(frames).toString(), 'abb');
});
