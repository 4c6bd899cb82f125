import assert from 'node:assert/strict';
import { test } from 'node:test';
import { residentByKind, slope } from '../../bench/soak.bench.ts';

test("bench:soak sorts the server's resident memory by kind of mapping", () => {
  const mapping = (start: number, kib: number, perms: string, name: string, rssKiB: number): string =>
    `${start.toString(16)}-${(start + kib * 1024).toString(16)} ${perms} 00000000 00:00 0   ${name}\n` +
    `Size: ${kib} kB\nRss: ${rssKiB} kB\nPss: ${rssKiB} kB\n`;
  const smaps =
    mapping(0x5a0000000000, 256, 'rw-p', '', 256) + // a V8 page
    mapping(0x5a0000140000, 256, 'rw-p', '', 200) + // another, partly resident
    mapping(0x7f0004000000, 20_000, 'rw-p', '', 10_240) + // a malloc arena (64 MiB-aligned)
    mapping(0x7f0004000000 + 20_000 * 1024, 45_536, '---p', '', 0) + // its reserved rest
    mapping(0x560000001000, 8192, 'rw-p', '[heap]', 4096) + // glibc's main heap
    mapping(0x7f0010001000, 8192, 'rw-p', '', 1024) + // another anonymous mapping (a stack, say)
    mapping(0x560000000000, 1024, 'r-xp', '/usr/bin/node', 512);
  assert.deepEqual(residentByKind(smaps), { v8Pages: 456 / 1024, malloc: 14_336 / 1024, other: 1.5 });
});

test('bench:soak fits its slope by least squares', () => {
  assert.equal(
    slope([
      [0, 1],
      [1, 3],
      [2, 5],
    ]),
    2,
  );
  assert.ok(Number.isNaN(slope([[0, 1]])));
});
