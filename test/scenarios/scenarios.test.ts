/** @module scenarios.test — runs every golden `*.scenario` file, and checks that bad steps are reported clearly. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import { parseScenario, runScenario, runScenarioFile, ScenarioError } from './scenario-runner.ts';

const DIR = import.meta.dirname;
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.scenario'))
  .sort();

describe('golden scenarios', () => {
  test('there are scenario files to run', () => {
    assert.ok(FILES.length > 0, `no *.scenario files in ${DIR}`);
  });
  for (const file of FILES) {
    const path = join(DIR, file);
    const title = /^#\s*(.+)/.exec(readFileSync(path, 'utf8'))?.[1]?.trim();
    test(title === undefined ? file : `${file}: ${title}`, () => runScenarioFile(path));
  }
});

/** Asserts that parsing `text` fails at `line` with a message matching `pattern`. */
function assertRejected(text: string, line: number, pattern: RegExp): void {
  assert.throws(
    () => parseScenario(text, 'bad.scenario'),
    (e: unknown) => {
      assert.ok(e instanceof ScenarioError, `expected a ScenarioError, got ${String(e)}`);
      assert.equal(e.file, 'bad.scenario');
      assert.equal(e.line, line);
      assert.match(e.message, new RegExp(`^bad\\.scenario:${line}: `));
      assert.match(e.message, pattern);
      return true;
    },
  );
}

describe('scenario parser', () => {
  test('rejects a step it does not know, naming file and line', () => {
    assertRejected(
      'market btc_usdt\nalice has 10 usdt\n\nalice jumps 3 times\n',
      4,
      /not a step: 'alice jumps 3 times'/,
    );
  });

  test('runs on the default venue unless the file names another mark rule before its first step', () => {
    assert.equal(parseScenario('market btc_usdt\n', 'a.scenario').venue.settings.markRule, 'depth');
    const median = parseScenario('# old mark\nvenue mark rule median\nmarket btc_usdt\n', 'b.scenario');
    assert.equal(median.venue.settings.markRule, 'median');
    assert.equal(median.venue.markets, DEFAULT_VENUE.markets);
    assertRejected('venue mark rule last\n', 1, /a mark rule is depth or median, not 'last'/);
    assertRejected(
      'market btc_usdt\nalice has 1 usdt\nvenue mark rule median\n',
      3,
      /comes before every step/,
    );
  });

  test('a scenario naming the median rule runs on it: a lone print moves its mark, not the default one', () => {
    const steps = (mark: string): string =>
      `market btc_usdt
operator funds the lending pool with 100000 usdt at 0.05% for 10 days
bob has 100000 usdt
trent has 1 btc
carol has 1010 usdt
bob buys 0.5 @ 29900
trent sells 0.01 @ 30000
bob buys 0.01 @ 30000
carol moves 1000 usdt to isolated btc_usdt
carol borrows 1000 usdt in isolated btc_usdt
trent sells 0.0001 @ 60000
carol buys 0.0001 @ 60000
mark btc_usdt: ${mark}
`;
    // Median of L 60,000, A 45,000 and the one-sided book's A; the depth window takes one lot at 30,300.
    runScenario(parseScenario(`venue mark rule median\n${steps('45000.00')}`, 'median.scenario'));
    runScenario(parseScenario(steps('30000.08'), 'depth.scenario'));
    assert.throws(() => runScenario(parseScenario(steps('45000.00'), 'depth.scenario')), /expected 4500000/);
  });

  test('rejects an unknown order option and an unknown result name', () => {
    assertRejected('market btc_usdt\nalice buys 0.1 @ 30000 fok\n', 2, /unknown order option 'fok'/);
    assertRejected(
      'market btc_usdt\nalice buys 0.1 @ 30000 -> refused NO_MONEY\n',
      2,
      /'NO_MONEY' is not a result name/,
    );
  });

  test('rejects an order step with no market and a label used before it is defined', () => {
    assertRejected('alice buys 0.1 @ 30000\n', 1, /no market/);
    assertRejected('market btc_usdt\nalice cancels a1\n', 2, /order label 'a1' is not defined/);
    assertRejected(
      'market btc_usdt\nalice buys 0.1 @ 30000 -> order a1\nbob buys 0.1 @ 1 -> order a1\n',
      3,
      /already used/,
    );
  });

  test('rejects malformed tables at the offending row', () => {
    assertRejected(
      'market btc_usdt\nbook:\n\n  | bid | price | ask |\n',
      2,
      /a book table starts with the row/,
    );
    assertRejected('market btc_usdt\nbook: empty\n  | 0.1 | 30000 | |\n', 3, /belongs right under 'book:'/);
    assertRejected(
      'market btc_usdt\nbook:\n  | bid | ask |\n',
      3,
      /starts with the row '\| bid \| price \| ask \|'/,
    );
    assertRejected(
      'market btc_usdt\nbook:\n  | bid | price | ask |\n  | 0.1 | 30000 | 0.2 |\n',
      4,
      /exactly one of bid and ask/,
    );
    assertRejected(
      'market btc_usdt\ntrades:\n  | price | amount | taker | maker | taker fee | maker fee |\n  | 1 | 1 | alice | bob | 0 btc | 0 usdt |\n',
      4,
      /taker cell reads/,
    );
  });

  test('a failed expectation names file and line and shows what the engine has', () => {
    const scenario = parseScenario(
      'market btc_usdt\nbob has 1 btc\nbob sells 0.5 @ 30000 -> order b1\nbook:\n  | bid | price | ask |\n  | | 30000.00 | 0.4000 |\n',
      'wrong.scenario',
    );
    assert.throws(
      () => runScenario(scenario),
      /^ScenarioError: wrong\.scenario:4: book btc_usdt differs[^]*30000\.00 \| 0\.5000/,
    );
    const refusal = parseScenario('market btc_usdt\nbob sells 0.5 @ 30000 -> order b1\n', 'poor.scenario');
    assert.throws(
      () => runScenario(refusal),
      /^ScenarioError: poor\.scenario:2: .*expected order b1, got refused INSUFFICIENT_BALANCE/,
    );
  });
});
