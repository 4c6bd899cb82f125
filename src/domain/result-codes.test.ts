import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { RESULTS } from './result-codes.ts';

test('docs/errors.md lists exactly the registry: every name, code and message', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map<string, { code: number; message: string }>();
  for (const line of doc.split('\n')) {
    const m = /^\| ([A-Z_]+) \| (\d+) \| (.+) \|$/.exec(line);
    if (m !== null) rows.set(m[1] as string, { code: Number(m[2]), message: m[3] as string });
  }
  assert.deepEqual(
    [...rows.keys()].sort(),
    Object.keys(RESULTS).sort(),
    'docs/errors.md and src/domain/result-codes.ts name different results',
  );
  for (const [name, info] of Object.entries(RESULTS)) {
    assert.deepEqual(rows.get(name), { code: info.code, message: info.message }, `row for ${name}`);
  }
});

test('success is 1000 and only OK has it', () => {
  const ok = Object.entries(RESULTS).filter(([, v]) => v.code === 1000);
  assert.deepEqual(
    ok.map(([k]) => k),
    ['OK'],
  );
});
