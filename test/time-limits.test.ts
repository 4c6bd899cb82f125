/**
 * Every test file that starts servers or other processes has a time limit (issue 31): a hang
 * fails the run fast, with the file's name, instead of holding it for as long as an outer timeout.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { until } from './fixtures/until.ts';

const TEST = import.meta.dirname;

/** True while process `pid` runs (a zombie does not). */
function runs(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
const LIMITED = ['integration', 'e2e', 'crash'];

const testFiles = (dir: string): string[] =>
  readdirSync(join(TEST, dir))
    .filter((f) => f.endsWith('.test.ts') || f.endsWith('.long.ts'))
    .map((f) => join(dir, f));

test('every test file in test/integration, test/e2e and test/crash calls fileTimeLimit', () => {
  const files = LIMITED.flatMap(testFiles);
  assert.ok(files.length > 30, `only ${files.length} files found`);
  const missing = files.filter(
    (f) => !/^fileTimeLimit\(import\.meta\.url\b/m.test(readFileSync(join(TEST, f), 'utf8')),
  );
  assert.deepEqual(
    missing,
    [],
    'these files have no time limit: call fileTimeLimit(import.meta.url) at the top',
  );
});

test('a file past its limit ends with a message naming it, exit code 1, its children killed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bourse-time-limit-'));
  try {
    const file = join(dir, 'hangs.test.ts');
    const fixtures = pathToFileURL(join(TEST, 'fixtures')).href;
    writeFileSync(
      file,
      `import { spawnNode } from '${fixtures}/children.ts';\n` +
        `import { fileTimeLimit } from '${fixtures}/time-limit.ts';\n` +
        `fileTimeLimit(import.meta.url, 200);\n` +
        // A child that would run for ever, and a parent kept alive by it.
        `const child = spawnNode(['-e', 'setInterval(() => {}, 1000); console.log("up")']);\n` +
        `child.stdout.once('data', () => console.log('child ' + child.pid));\n`,
    );
    const run = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, /hangs\.test\.ts: still running after 0\.2 s, its time limit/);
    const pid = Number(/child (\d+)/.exec(run.stdout)?.[1]);
    assert.ok(pid > 0, run.stdout);
    // SIGKILL is delivered asynchronously; a zombie (not yet reaped by its new parent) is dead.
    await until('the child to die', () => (runs(pid) ? undefined : true));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
