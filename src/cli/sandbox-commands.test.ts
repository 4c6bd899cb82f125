import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandHelp, findCommand, overview, type AdminCall } from './commands.ts';
import { reportTime } from './sandbox-commands.ts';

const callOf = (words: string[], flags: [string, string][] = []): AdminCall | string => {
  const found = findCommand(words);
  assert.ok(found !== undefined, words.join(' '));
  const map = new Map<string, string[]>(flags.map(([f, v]) => [f, [v]]));
  return (found.command.call as NonNullable<typeof found.command.call>)(found.args, map);
};

test('bourse sandbox save|restore|reset|saves call their admin routes', () => {
  assert.deepEqual((callOf(['sandbox', 'save', 'before']) as AdminCall).form, [['name', 'before']]);
  assert.equal((callOf(['sandbox', 'save', 'before']) as AdminCall).path, '/admin/sandbox/save');
  assert.equal((callOf(['sandbox', 'restore', 'before']) as AdminCall).path, '/admin/sandbox/restore');
  assert.equal((callOf(['sandbox', 'reset']) as AdminCall).path, '/admin/sandbox/reset');
  assert.equal((callOf(['sandbox', 'saves']) as AdminCall).path, '/admin/sandbox/saves');
  const help = overview();
  for (const line of ['sandbox save <name>', 'sandbox restore <name>', 'sandbox reset', 'report <user>'])
    assert.ok(help.includes(line), line);
});

test('bourse report reads --from and --to as times, refuses what is not one', () => {
  const call = callOf(
    ['report', 'alice'],
    [
      ['--market', 'btc_usdt'],
      ['--from', '2026-01-01'],
      ['--to', '2026-01-01T10:00:00Z'],
    ],
  ) as AdminCall;
  assert.equal(call.path, '/admin/report');
  assert.deepEqual(call.form, [
    ['user', 'alice'],
    ['market', 'btc_usdt'],
    ['from', String(Date.parse('2026-01-01T00:00:00Z'))],
    ['to', String(Date.parse('2026-01-01T10:00:00Z'))],
  ]);
  assert.equal(
    reportTime('--to', '2026-01-01'),
    Date.parse('2026-01-02T00:00:00Z') - 1,
    'a date ends at its end',
  );
  assert.equal(reportTime('--from', '1767225600000'), 1_767_225_600_000);
  assert.match(
    callOf(['report', 'alice'], [['--from', 'yesterday']]) as string,
    /--from 'yesterday' is not a time/,
  );
  assert.match(String(reportTime('--to', '2026-13-45')), /is not a time/);
  const help = commandHelp(
    (findCommand(['report']) as { command: Parameters<typeof commandHelp>[0] }).command,
  );
  assert.match(help, /usage: bourse report <user> \[--market <market>\] \[--from <time>\] \[--to <time>\]/);
  assert.match(help, /--from <time>\s+the period starts then/);
});
