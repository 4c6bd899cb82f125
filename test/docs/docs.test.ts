/**
 * The documentation stays true to the repository: every markdown link in README.md, docs/ and
 * bench/README.md resolves to a file inside the repository (and a `#fragment` to a heading of
 * it), no page points at a path outside the repository, and README's configuration table lists
 * every server flag.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { SERVER_FLAGS } from '../../src/config/options.ts';
import { DEMO_PERMISSIONS } from '../../src/demo/demo-market.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** README.md, bench/README.md and every .md under docs/. */
function pages(): string[] {
  const docs = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? docs(path) : name.endsWith('.md') ? [path] : [];
    });
  return [join(ROOT, 'README.md'), join(ROOT, 'bench', 'README.md'), ...docs(join(ROOT, 'docs'))];
}

/** The text without fenced code blocks, where link syntax is only an example. */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's anchors of a page's headings (lowercase, punctuation dropped, spaces as hyphens, repeats numbered). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = (m[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const inside = (path: string): boolean => path === ROOT || path.startsWith(ROOT + sep);

test('every markdown link resolves to a file inside the repository', () => {
  const problems: string[] = [];
  let checked = 0;
  for (const page of pages()) {
    const text = readFileSync(page, 'utf8');
    const where = relative(ROOT, page);
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1] as string;
      if (/^(https?|mailto):/.test(target)) continue;
      checked++;
      const [file = '', fragment] = target.split('#');
      const path = file === '' ? page : resolve(dirname(page), decodeURIComponent(file));
      if (!inside(path)) problems.push(`${where}: ${target} points outside the repository`);
      else if (!existsSync(path)) problems.push(`${where}: ${target} does not exist`);
      else if (
        fragment !== undefined &&
        path.endsWith('.md') &&
        !anchors(readFileSync(path, 'utf8')).has(fragment)
      ) {
        problems.push(`${where}: ${target}: no heading #${fragment} in ${relative(ROOT, path)}`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked > 10, `only ${checked} links found: is the pattern right?`);
});

test('no page names a relative path the repository does not have', () => {
  const problems: string[] = [];
  for (const page of pages()) {
    const where = relative(ROOT, page);
    for (const m of readFileSync(page, 'utf8').matchAll(/`((?:\.\.\/)+[^`\s]*)`/g)) {
      // A relative path in code text must name something the repository has.
      const path = resolve(dirname(page), m[1] as string);
      if (!inside(path) || !existsSync(path)) problems.push(`${where}: \`${m[1]}\``);
    }
  }
  assert.deepEqual(problems, []);
});

test('the test above catches what it should', () => {
  assert.equal(inside(resolve(ROOT, 'docs', '..', '..', 'shared', 'x.md')), false);
  assert.deepEqual(
    [...anchors('# The admin listener\n## Où? (2)\n## Où? (2)\n```\n# not a heading\n```')],
    ['the-admin-listener', 'où-2', 'où-2-1'],
  );
});

test("README's configuration table lists every server flag and its environment variable", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  for (const { flag, env } of SERVER_FLAGS) {
    assert.match(
      readme,
      new RegExp(`\\| \`${flag}\` \\| \`${env}\` \\|`),
      `${flag} / ${env} missing from README`,
    );
  }
});

test('the docs say what the demo trader’s key may do, as the demo gives it', () => {
  const web = readFileSync(join(ROOT, 'docs', 'web.md'), 'utf8');
  const sandbox = readFileSync(join(ROOT, 'docs', 'sandbox.md'), 'utf8');
  const granted = Object.entries(DEMO_PERMISSIONS)
    .filter(([, on]) => on)
    .map(([name]) => name);
  // sandbox.md lists them; web.md's margin tab must not say the key lacks lever (issue 31).
  assert.ok(
    sandbox.includes(`(permissions ${granted.slice(0, -1).join(', ')} and ${granted.at(-1)}`),
    granted.join(),
  );
  if (DEMO_PERMISSIONS.lever) assert.doesNotMatch(web, /demo('s own)? key has none/);
  assert.match(web, /the demo trader's key printed at start-up\s+has it/);
});

test('the walk-throughs follow one another (README, funds.md, margin.md): none makes a user an earlier one made', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const funds = readFileSync(join(ROOT, 'docs', 'funds.md'), 'utf8');
  const margin = readFileSync(join(ROOT, 'docs', 'margin.md'), 'utf8');
  const made = (text: string): string[] =>
    [...text.matchAll(/npm run bourse -- user create (\S+)/g)].map((m) => (m[1] as string).toLowerCase());
  const walkThroughs = [
    readme,
    funds.slice(funds.indexOf('## Walk-through'), funds.indexOf('## The parts')),
    margin.slice(margin.indexOf('## Using margin')),
  ];
  const before: string[] = [];
  for (const text of walkThroughs) {
    assert.ok(made(text).length > 0, text.slice(0, 80));
    assert.deepEqual(
      made(text).filter((name) => before.includes(name)),
      [],
      'user create refuses a name that exists',
    );
    before.push(...made(text));
  }
});
