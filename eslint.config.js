// ESLint flat config: typescript-eslint's recommended rules plus the import-direction rule that keeps
// the architecture's picture true (domain ← engine ← sequencer ← adapters; main.ts wires them).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const ADAPTERS = ['api', 'journal', 'store', 'cli', 'chain', 'web', 'demo', 'observability', 'cluster'];
const layer = (dir, forbidden, message, paths = []) => ({
  files: [`src/${dir}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [{ group: forbidden.flatMap((f) => [`**/${f}/*`, `**/${f}/**`, `**/${f}.ts`]), message }],
        paths,
      },
    ],
  },
});

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
  layer(
    'domain',
    ['engine', 'sequencer', 'main', ...ADAPTERS],
    'domain imports nothing of the system: it is the leaf.',
  ),
  layer('engine', ['sequencer', 'main', ...ADAPTERS], 'engine imports only domain.'),
  {
    // engine.ts imports every engine module; they take the result types from results.ts (no cycle).
    ...layer('engine', ['sequencer', 'main', ...ADAPTERS], 'engine imports only domain.', [
      {
        name: './engine.ts',
        message:
          "an engine module takes ApplyResult and the order shapes from './results.ts': engine.ts imports it.",
      },
    ]),
    ignores: ['src/engine/engine.ts', '**/*.test.ts'],
  },
  layer(
    'margin',
    ['engine', 'sequencer', 'main', ...ADAPTERS],
    'margin is pure domain rules: it imports only domain, and the engine imports it.',
  ),
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
  {
    // The gateways (HTTP, WebSocket, market data) and the other consumers of the venue read a
    // read-only state and submit through a port (src/sequencer/venue-ports.ts): in a gateway
    // process the state is a replica and the submit goes over the network. Tests build engines.
    files: ['src/api/**/*.ts', 'src/chain/**/*.ts', 'src/demo/**/*.ts'],
    ignores: ['**/*.test.ts', '**/test-*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/engine/engine.ts'],
              importNames: ['Engine'],
              message:
                'adapters read VenueState and submit through SubmitPort (src/sequencer/venue-ports.ts).',
            },
          ],
        },
      ],
    },
  },
  layer(
    'sequencer',
    ['main', ...ADAPTERS],
    'sequencer imports domain and engine, and talks to adapters through ports.',
  ),
);
