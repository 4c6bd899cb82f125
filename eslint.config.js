// ESLint flat config: typescript-eslint's recommended rules plus the import boundaries that keep the
// architecture's picture true (domain ← engine ← sequencer ← adapters; main.ts wires them; the API
// is assembled once in src/api/assembly.ts). Every file under src/ gets exactly one
// no-restricted-imports rule (flat config would otherwise let the last one matching win): its
// folder's boundary, plus, outside tests, "no test helper and no devDependency".
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const ADAPTERS = ['api', 'journal', 'store', 'cli', 'chain', 'web', 'demo', 'observability', 'cluster'];
const TESTS = ['**/*.test.ts', '**/*.case.ts', '**/*.bench.ts'];
const DEV_DEPENDENCIES = Object.keys(
  JSON.parse(readFileSync(join(import.meta.dirname, 'package.json'), 'utf8')).devDependencies,
);

const folders = (names) => names.flatMap((f) => [`**/${f}/*`, `**/${f}/**`, `**/${f}.ts`]);
const others = (self, extra = []) => [...ADAPTERS.filter((a) => a !== self), 'main', ...extra];

/** What each folder of src/ may not import, and why. */
const BOUNDARIES = {
  domain: {
    forbidden: ['engine', 'sequencer', 'main', 'config', ...ADAPTERS],
    message: 'domain imports nothing of the system: it is the leaf.',
  },
  engine: { forbidden: ['sequencer', 'main', 'config', ...ADAPTERS], message: 'engine imports only domain.' },
  margin: {
    forbidden: ['engine', 'sequencer', 'main', 'config', ...ADAPTERS],
    message: 'margin is pure domain rules: it imports only domain, and the engine imports it.',
  },
  sequencer: {
    forbidden: ['main', 'config', ...ADAPTERS],
    message: 'sequencer imports domain and engine, and talks to adapters through ports.',
  },
  config: {
    forbidden: others('config').filter((a) => a !== 'journal'),
    message:
      'config reads the settings and picks the journal; it imports no other adapter (the API opens its own parts: src/api/auth/open-rate-limiter.ts).',
  },
  journal: {
    forbidden: others('journal', ['config']),
    message: 'a journal adapter imports no other adapter.',
  },
  observability: {
    forbidden: others('observability', ['config']),
    message: 'observability imports no adapter: the parts it watches are given to it.',
  },
  chain: { forbidden: others('chain', ['config']), message: 'a chain adapter imports no other adapter.' },
  store: {
    forbidden: ['api', 'cli', 'cluster', 'journal', 'demo', 'web', 'chain', 'observability', 'main'],
    message: 'the history store imports no other adapter.',
  },
  api: {
    forbidden: ['cli', 'cluster', 'journal', 'demo', 'web', 'main'],
    message:
      'the API is built from ports (src/api/assembly.ts); the journal, the roles and the programs are not its to import.',
  },
  demo: {
    forbidden: ['cli', 'cluster', 'journal', 'store', 'web', 'main'],
    message: 'the demo is a client of the venue: it submits through ports and calls the API.',
  },
  cli: { forbidden: [], message: '' },
  cluster: { forbidden: [], message: '' },
};

/** In src, outside tests: no test helper, no devDependency (a production install has none). */
const PRODUCTION_ONLY = [
  {
    group: ['**/test/*', '**/test/**', '**/test-*.ts'],
    message:
      'src imports no test helper: harnesses live in test/fixtures/ and build the API with src/api/assembly.ts.',
  },
  {
    group: DEV_DEPENDENCIES.map((d) => `${d}/**`),
    message:
      'a devDependency is for tests, benchmarks and tooling, not for src (npm ci --omit=dev leaves it out).',
  },
];
const DEV_DEPENDENCY_PATHS = DEV_DEPENDENCIES.map((name) => ({
  name,
  message:
    'a devDependency is for tests, benchmarks and tooling, not for src (npm ci --omit=dev leaves it out).',
}));

/**
 * The gateways (HTTP, WebSocket, market data) and the other consumers of the venue read a
 * read-only state and submit through a port (src/sequencer/venue-ports.ts): in a gateway process
 * the state is a replica and the submit goes over the network. Tests build engines.
 */
const READS_VENUE_STATE = new Set(['api', 'chain', 'demo']);
const ENGINE_CLASS = {
  group: ['**/engine/engine.ts'],
  importNames: ['Engine'],
  message: 'adapters read VenueState and submit through SubmitPort (src/sequencer/venue-ports.ts).',
};

/** The inner layers hold in their tests too (less config, whose default venue tests use); an adapter's tests wire real parts. */
const INNER = new Set(['domain', 'engine', 'margin', 'sequencer']);
const boundary = (dir, tests = false) => {
  const { forbidden, message } = BOUNDARIES[dir];
  if (forbidden.length === 0 || (tests && !INNER.has(dir))) return [];
  return [{ group: folders(tests ? forbidden.filter((f) => f !== 'config') : forbidden), message }];
};
const restrict = (files, ignores, patterns, paths = []) => ({
  files,
  ...(ignores.length === 0 ? {} : { ignores }),
  rules: { 'no-restricted-imports': ['error', { paths, patterns }] },
});

const importRules = [
  // Files at the root of src (main.ts, prepared-parts.ts): the composition root.
  restrict(['src/*.ts'], TESTS, PRODUCTION_ONLY, DEV_DEPENDENCY_PATHS),
  ...Object.keys(BOUNDARIES).flatMap((dir) => [
    restrict(
      [`src/${dir}/**/*.ts`],
      TESTS,
      [...boundary(dir), ...(READS_VENUE_STATE.has(dir) ? [ENGINE_CLASS] : []), ...PRODUCTION_ONLY],
      DEV_DEPENDENCY_PATHS,
    ),
    ...(boundary(dir, true).length === 0
      ? []
      : [
          restrict(
            TESTS.map((t) => `src/${dir}/${t}`),
            [],
            boundary(dir, true),
          ),
        ]),
  ]),
  // engine.ts imports every engine module; they take the result types from results.ts (no cycle).
  // Later in the list, so it replaces the engine's rule above with the same and one path more.
  restrict(
    ['src/engine/**/*.ts'],
    ['src/engine/engine.ts', ...TESTS],
    [...boundary('engine'), ...PRODUCTION_ONLY],
    [
      ...DEV_DEPENDENCY_PATHS,
      {
        name: './engine.ts',
        message:
          "an engine module takes ApplyResult and the order shapes from './results.ts': engine.ts imports it.",
      },
    ],
  ),
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'web/dist/**', 'test-output/**'] },
  js.configs.recommended,
  {
    files: ['bin/**/*.js', 'eslint.config.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.name='parseFloat']",
          message: 'No floats near money: parse decimals with src/domain/money.ts.',
        },
      ],
    },
  },
  ...importRules,
  {
    // Wire shapes (the interface's field names and number formats) live under src/api/ (e.g.
    // src/api/wire/): a module named for the wire anywhere else is refused whatever it holds.
    files: ['src/{domain,engine,margin,sequencer,journal,store,chain,observability,config}/**/*wire*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'Program', message: 'wire shapes live under src/api/ (src/api/wire/ for shared ones).' },
      ],
    },
  },
  {
    files: ['web/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/src/*', '**/src/**'],
              message:
                'the page is a client like any other: it talks to the server over HTTP and WebSocket only.',
            },
          ],
        },
      ],
    },
  },
);
