/**
 * @module scenario-runner — parses trader-readable `*.scenario` files and runs them as golden tests
 * against the real engine on the default venue (its `depth` mark rule, docs/margin.md), or on it with
 * another mark rule when the file says so before its first step (`venue mark rule median`).
 *
 * ## The format (one step per line; `#` starts a comment, on its own line or after a step)
 *
 * Setup and actions (each engine command advances the clock by 1 ms unless `time passes` said
 * otherwise; users are registered the first time an action names them):
 *
 *     venue mark rule median                  before the first step: the default venue with that
 *                                             mark rule (`depth`, the default's, or issue 15's `median`)
 *     market btc_usdt                         current market for the steps below
 *     alice has 10000 usdt                    credits a deposit (its business id is made up)
 *     alice deposits 1 btc id d1              operator credit d1; outcome `ok`/`duplicate`/`refused X`
 *     alice gets usdt address T1 [memo 7] [on TRC20]   records her deposit address (chain: the coin's first)
 *     tx h1 pays 5 usdt to T1 [memo 7] [on TRC20] [with 3 confirmations]   the chain reports a deposit
 *     tx h1 has 20 confirmations | tx h1 fails        the chain reports it again
 *     alice books usdt address T9 [on TRC20]  adds the address to her withdrawal book, verified
 *     alice adds usdt address T9 [on TRC20] | alice verifies usdt address T9
 *     alice sets a fund password | alice enters a wrong fund password
 *     alice withdraws 5 usdt fee 1 to T9 [itransfer]   withdrawal 1, 2, … in order of requests
 *     withdrawal 1 is approved | is cancelled [by alice] | is being sent | is sent as tx h2
 *     withdrawal 1 has 3 confirmations | withdrawal 1 fails
 *     alice buys 0.5 @ 30000 [postonly|ioc] [cid abc1] [acct 1|2] [express] [in eth_usdt]  -> order a1
 *     alice sells batch [in eth_usdt]: 0.1 @ 30000, 0.2 @ 30100           -> orders a1 a2
 *     alice cancels a1 [in btc_usdt]          cancels by order label
 *     alice cancels cid abc1 [in btc_usdt]    cancels the latest order with that customerOrderId
 *     alice arms dead-man on btc_usdt         cancelAllOrdersAfter
 *     time passes 59s | 500ms | 2m            the next command comes that long after the previous
 *     timers fire                             the scheduler's FireTimers
 *     alice uses zb for fees | alice stops using zb for fees
 *     operator halts btc_usdt | operator resumes btc_usdt
 *
 * Margin steps (the lending pool, transfers, offers, borrowing, repayment, preferences, and their
 * expectations) are described and parsed in margin-steps.ts.
 *
 * An action may end in `-> outcome`: `ok` (the default), `duplicate` (accepted before: nothing
 * changed), `refused RESULT_NAME` (or `refused RESULT_NAME "text"`: the refusal's message must
 * contain the text), `order LABEL`, `orders LABEL LABEL …`. Order numbers are parsed
 * with `parseOrderNumbers`, so too many decimals are refused as the API edge refuses them.
 *
 * Expectations (change nothing, take no time). Numbers are decimal text compared exactly as
 * integers at the coin's or market's scale (`7000.1` and `7000.100000` are the same amount):
 *
 *     book [btc_usdt]:                        then `| bid | price | ask |` rows, highest price first;
 *                                             or `book [btc_usdt]: empty`
 *     trades [btc_usdt]:                      trades since the previous `trades` check of that
 *                                             market: `| price | amount | taker | maker | taker fee | maker fee |`
 *                                             rows such as `| 30000.00 | 0.1000 | alice buys | bob | 0.00020000 btc | 6.000000 usdt |`;
 *                                             or `trades [btc_usdt]: none`
 *     balance alice usdt: available 7000.1 frozen 2999.9
 *     fee income usdt: 12.5
 *     order a1: status 3 filled 0.1000        status as the interface numbers it: 0 pending,
 *                                             1 cancelled, 2 done (or cancelled after a fill), 3 partly filled
 *     open orders alice [in btc_usdt]: a1 a2  (or `none`), oldest first
 *     last price btc_usdt: 30000.00           (or `none`)
 *     ledger usdt: users 9990 + fees 10 = deposits 10000 - withdrawals 0
 *     withdrawal 1: approved                  its state (submitted, approved, sending, sent, …)
 *     tx h1: confirming                       a chain deposit's state (confirming, credited, failed)
 *
 * After every step the runner calls `engine.assertInvariants()` (which includes conservation of
 * every coin); a refused action must also leave the state exactly as it was. At the end, the
 * engine's snapshot must restore to the same state hash. Every error names the file and line.
 */
import type { LoanRecord } from '../../src/margin/loans.ts';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import {
  BUY,
  SELL,
  type AcctType,
  type Command,
  type OrderKind,
  type ReportDeposit,
  type Side,
} from '../../src/domain/commands.ts';
import type { EngineEvent, OrderStatus, TradeExecuted } from '../../src/domain/events.ts';
import { chainDepositId } from '../../src/domain/chains.ts';
import { formatUnits, parseDecimal } from '../../src/domain/money.ts';
import { parseOrderNumbers } from '../../src/domain/order-input.ts';
import { RESULTS, type ResultName } from '../../src/domain/result-codes.ts';
import type { MarketSpec, MarkRule, VenueConfig } from '../../src/domain/specs.ts';
import { Engine, type ApplyResult } from '../../src/engine/engine.ts';
import { parseMarginStep, type MarginPort } from './margin-steps.ts';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';

/** A scenario that cannot be parsed or whose expectations do not hold, located by file and line. */
export class ScenarioError extends Error {
  readonly file: string;
  readonly line: number;
  constructor(file: string, line: number, message: string) {
    super(`${file}:${line}: ${message}`);
    this.name = 'ScenarioError';
    this.file = file;
    this.line = line;
  }
}

/** What an action is expected to do. */
export type Outcome =
  | { readonly kind: 'ok' }
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'refused'; readonly result: ResultName; readonly message?: string }
  | { readonly kind: 'order'; readonly labels: readonly string[] };

/** One [amount, price] pair of a batch, as written. */
export interface OrderText {
  readonly amount: string;
  readonly price: string;
}

/** One expected row of a book table: a level on one side. */
export interface BookRow {
  readonly side: Side;
  readonly price: string;
  readonly amount: string;
}

/** One expected row of a trades table. */
export interface TradeRow {
  readonly price: string;
  readonly amount: string;
  readonly taker: string;
  readonly takerSide: Side;
  readonly maker: string;
  readonly takerFee: string;
  readonly takerFeeCoin: string;
  readonly makerFee: string;
  readonly makerFeeCoin: string;
}

type Action =
  | { readonly kind: 'has'; readonly user: string; readonly amount: string; readonly coin: string }
  | {
      readonly kind: 'deposit';
      readonly user: string;
      readonly amount: string;
      readonly coin: string;
      readonly id: string;
    }
  | {
      readonly kind: 'address';
      readonly user: string;
      readonly coin: string;
      readonly address: string;
      readonly memo: string;
      readonly chain: string | undefined;
    }
  | {
      readonly kind: 'chainPays';
      readonly tx: string;
      readonly amount: string;
      readonly coin: string;
      readonly address: string;
      readonly memo: string;
      readonly chain: string | undefined;
      readonly confirmations: number;
    }
  | { readonly kind: 'chainUpdate'; readonly tx: string; readonly confirmations: number | 'failed' }
  | {
      readonly kind: 'book';
      readonly user: string;
      readonly coin: string;
      readonly address: string;
      readonly chain: string | undefined;
      readonly steps: 'add' | 'verify' | 'both';
    }
  | { readonly kind: 'fundPassword'; readonly user: string; readonly wrong: boolean }
  | {
      readonly kind: 'withdraw';
      readonly user: string;
      readonly amount: string;
      readonly fee: string;
      readonly coin: string;
      readonly address: string;
      readonly itransfer: boolean;
    }
  | {
      readonly kind: 'withdrawal';
      readonly id: string;
      readonly step: 'approve' | 'cancel' | 'send' | 'sent' | 'confirm' | 'fail';
      readonly user: string | undefined;
      readonly tx: string;
      readonly confirmations: number;
    }
  | {
      readonly kind: 'order';
      readonly user: string;
      readonly side: Side;
      readonly order: OrderText;
      readonly orderKind: OrderKind;
      readonly clientOrderId: string;
      readonly acctType: number;
      readonly express: boolean;
      readonly market: string;
    }
  | {
      readonly kind: 'batch';
      readonly user: string;
      readonly side: Side;
      readonly orders: readonly OrderText[];
      readonly market: string;
    }
  | {
      readonly kind: 'cancel';
      readonly user: string;
      readonly label: string;
      readonly clientOrderId: string;
      readonly market: string | undefined;
    }
  | { readonly kind: 'deadman'; readonly user: string; readonly market: string }
  | { readonly kind: 'fire' }
  | { readonly kind: 'feePreference'; readonly user: string; readonly coin: string; readonly on: boolean }
  | { readonly kind: 'marketStatus'; readonly market: string; readonly status: 'trading' | 'halted' }
  | { readonly kind: 'margin'; readonly build: (port: MarginPort) => Command };

type Expectation =
  | { readonly kind: 'margin'; readonly check: (port: MarginPort) => void }
  | { readonly kind: 'book'; readonly market: string; readonly rows: readonly BookRow[] }
  | { readonly kind: 'trades'; readonly market: string; readonly rows: readonly TradeRow[] }
  | {
      readonly kind: 'balance';
      readonly user: string;
      readonly coin: string;
      readonly available: string;
      readonly frozen: string;
    }
  | { readonly kind: 'feeIncome'; readonly coin: string; readonly amount: string }
  | {
      readonly kind: 'orderState';
      readonly label: string;
      readonly status: OrderStatus;
      readonly filled: string | undefined;
    }
  | {
      readonly kind: 'openOrders';
      readonly user: string;
      readonly market: string | undefined;
      readonly labels: readonly string[];
    }
  | { readonly kind: 'lastPrice'; readonly market: string; readonly price: string | undefined }
  | {
      readonly kind: 'ledger';
      readonly coin: string;
      readonly users: string;
      readonly fees: string;
      readonly deposits: string;
      readonly withdrawals: string;
    }
  | { readonly kind: 'withdrawalState'; readonly id: string; readonly state: string }
  | { readonly kind: 'depositState'; readonly tx: string; readonly state: string };

/** One parsed step: an action with its expected outcome, a clock advance, or an expectation. */
export type Step = { readonly line: number; readonly text: string } & (
  | { readonly kind: 'action'; readonly action: Action; readonly outcome: Outcome }
  | { readonly kind: 'time'; readonly ms: number }
  | { readonly kind: 'expect'; readonly expectation: Expectation }
);

export interface Scenario {
  readonly file: string;
  /** The first comment line, if the file starts with one. */
  readonly title: string;
  /** The venue it runs on: the default venue, or it with another mark rule (`venue mark rule …`). */
  readonly venue: VenueConfig;
  readonly steps: readonly Step[];
}

/** The time of the first command (2023-11-14T22:13:20Z): fixed, so runs are deterministic. */
export const SCENARIO_START_MS = 1_700_000_000_000;

const NAME = /^[A-Za-z][\w.@-]*$/;
const LABEL = /^[A-Za-z][A-Za-z0-9_]*$/;
const RESERVED = new Set([
  'market',
  'book',
  'trades',
  'balance',
  'fee',
  'order',
  'open',
  'last',
  'ledger',
  'time',
  'timers',
  'operator',
  'withdrawal',
  'tx',
]);
const BOOK_HEADER = ['bid', 'price', 'ask'];
const TRADES_HEADER = ['price', 'amount', 'taker', 'maker', 'taker fee', 'maker fee'];
const STATUS_CODES: readonly OrderStatus[] = [0, 1, 2, 3];
const TIME_UNITS_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000 };

// ───────────────────────────── parsing ─────────────────────────────

/** Parses a scenario's text. Throws a `ScenarioError` naming the line of the first malformed step. */
export function parseScenario(text: string, file: string): Scenario {
  const lines = text.split(/\r?\n/);
  const steps: Step[] = [];
  const labels = new Set<string>();
  let market: string | undefined;
  let title = '';
  let venue: VenueConfig = DEFAULT_VENUE;
  let i = 0;

  const fail = (line: number, message: string): never => {
    throw new ScenarioError(file, line, message);
  };

  while (i < lines.length) {
    const lineNo = i + 1;
    const raw = lines[i] as string;
    i++;
    if (title === '' && steps.length === 0 && /^\s*#/.test(raw)) title = raw.replace(/^\s*#\s*/, '').trim();
    const text = stripComment(raw);
    if (text === '') continue;
    const here = { line: lineNo, text };
    const needMarket = (given: string | undefined): string =>
      given ??
      market ??
      fail(lineNo, `no market: add 'market <name>' above, or 'in <market>' to the step: '${text}'`);
    const tableRows = (): string[][] => {
      const rows: string[][] = [];
      while (i < lines.length) {
        const row = stripComment(lines[i] as string);
        if (!row.startsWith('|')) break;
        if (!row.endsWith('|')) fail(i + 1, `a table row must start and end with '|': '${row}'`);
        rows.push(
          row
            .slice(1, -1)
            .split('|')
            .map((c) => c.trim()),
        );
        i++;
      }
      return rows;
    };

    if (text.startsWith('|')) {
      fail(
        lineNo,
        `a table row belongs right under 'book:' or 'trades:', with no blank or comment line between`,
      );
    }
    let m: RegExpExecArray | null;
    if ((m = /^market (\S+)$/.exec(text))) {
      market = m[1] as string;
      continue;
    }
    if ((m = /^venue mark rule (\S+)$/.exec(text))) {
      const rule = m[1] as string;
      if (rule !== 'depth' && rule !== 'median')
        fail(lineNo, `a mark rule is depth or median, not '${rule}'`);
      if (steps.length > 0) fail(lineNo, `'venue mark rule' comes before every step: '${text}'`);
      venue = { ...DEFAULT_VENUE, settings: { ...DEFAULT_VENUE.settings, markRule: rule as MarkRule } };
      continue;
    }
    if ((m = /^time passes (\d+)(ms|s|m)$/.exec(text))) {
      const ms = Number(m[1]) * (TIME_UNITS_MS[m[2] as string] as number);
      if (!Number.isSafeInteger(ms) || ms <= 0)
        fail(lineNo, `time must pass by a positive amount: '${text}'`);
      steps.push({ ...here, kind: 'time', ms });
      continue;
    }
    if (text === 'timers fire' || text.startsWith('timers fire ->')) {
      const { outcome } = splitOutcome(text, lineNo, fail);
      steps.push({ ...here, kind: 'action', action: { kind: 'fire' }, outcome });
      continue;
    }
    if ((m = /^book(?: (\S+))?:(.*)$/.exec(text))) {
      const bookMarket = needMarket(m[1]);
      const rest = (m[2] as string).trim();
      if (rest === 'empty') {
        steps.push({ ...here, kind: 'expect', expectation: { kind: 'book', market: bookMarket, rows: [] } });
        continue;
      }
      if (rest !== '') fail(lineNo, `after 'book ${bookMarket}:' write 'empty' or a table on the next lines`);
      const table = tableRows();
      steps.push({
        ...here,
        kind: 'expect',
        expectation: { kind: 'book', market: bookMarket, rows: parseBookTable(table, lineNo, fail) },
      });
      continue;
    }
    if ((m = /^trades(?: (\S+))?:(.*)$/.exec(text))) {
      const tradesMarket = needMarket(m[1]);
      const rest = (m[2] as string).trim();
      if (rest === 'none') {
        steps.push({
          ...here,
          kind: 'expect',
          expectation: { kind: 'trades', market: tradesMarket, rows: [] },
        });
        continue;
      }
      if (rest !== '') fail(lineNo, `after 'trades:' write 'none' or a table on the next lines`);
      const table = tableRows();
      steps.push({
        ...here,
        kind: 'expect',
        expectation: { kind: 'trades', market: tradesMarket, rows: parseTradesTable(table, lineNo, fail) },
      });
      continue;
    }
    if ((m = /^balance (\S+) (\S+): available (\S+) frozen (\S+)$/.exec(text))) {
      steps.push({
        ...here,
        kind: 'expect',
        expectation: {
          kind: 'balance',
          user: m[1] as string,
          coin: m[2] as string,
          available: m[3] as string,
          frozen: m[4] as string,
        },
      });
      continue;
    }
    if ((m = /^fee income (\S+): (\S+)$/.exec(text))) {
      steps.push({
        ...here,
        kind: 'expect',
        expectation: { kind: 'feeIncome', coin: m[1] as string, amount: m[2] as string },
      });
      continue;
    }
    if ((m = /^order (\S+): status (\d+)(?: filled (\S+))?$/.exec(text))) {
      const label = m[1] as string;
      if (!labels.has(label))
        fail(lineNo, `order label '${label}' is not defined by an earlier '-> order ${label}'`);
      const status = Number(m[2]);
      const known = STATUS_CODES.find((s) => s === status);
      if (known === undefined) fail(lineNo, `order status must be 0, 1, 2 or 3, not ${m[2]}`);
      steps.push({
        ...here,
        kind: 'expect',
        expectation: { kind: 'orderState', label, status: known as OrderStatus, filled: m[3] },
      });
      continue;
    }
    if ((m = /^open orders (\S+)(?: in (\S+))?: (.+)$/.exec(text))) {
      const list = (m[3] as string).trim();
      const openLabels = list === 'none' ? [] : list.split(/[\s,]+/);
      for (const label of openLabels) {
        if (!labels.has(label)) fail(lineNo, `order label '${label}' is not defined by an earlier step`);
      }
      steps.push({
        ...here,
        kind: 'expect',
        expectation: { kind: 'openOrders', user: m[1] as string, market: m[2], labels: openLabels },
      });
      continue;
    }
    if ((m = /^last price (\S+): (\S+)$/.exec(text))) {
      const price = m[2] as string;
      steps.push({
        ...here,
        kind: 'expect',
        expectation: {
          kind: 'lastPrice',
          market: m[1] as string,
          price: price === 'none' ? undefined : price,
        },
      });
      continue;
    }
    if ((m = /^ledger (\S+): users (\S+) \+ fees (\S+) = deposits (\S+) - withdrawals (\S+)$/.exec(text))) {
      steps.push({
        ...here,
        kind: 'expect',
        expectation: {
          kind: 'ledger',
          coin: m[1] as string,
          users: m[2] as string,
          fees: m[3] as string,
          deposits: m[4] as string,
          withdrawals: m[5] as string,
        },
      });
      continue;
    }
    if ((m = /^withdrawal (\S+): (\S+)$/.exec(text))) {
      steps.push({
        ...here,
        kind: 'expect',
        expectation: { kind: 'withdrawalState', id: m[1] as string, state: m[2] as string },
      });
      continue;
    }
    if ((m = /^tx (\S+): (\S+)$/.exec(text))) {
      steps.push({
        ...here,
        kind: 'expect',
        expectation: { kind: 'depositState', tx: m[1] as string, state: m[2] as string },
      });
      continue;
    }
    if (text.startsWith('withdrawal ') || text.startsWith('tx ')) {
      const { body, outcome } = splitOutcome(text, lineNo, fail);
      steps.push({ ...here, kind: 'action', action: parseFundsAction(body, lineNo, fail), outcome });
      continue;
    }
    if ((m = /^operator (halts|resumes) (\S+)(?:\s|$)/.exec(text))) {
      const { outcome } = splitOutcome(text, lineNo, fail);
      const status = m[1] === 'halts' ? 'halted' : 'trading';
      steps.push({
        ...here,
        kind: 'action',
        action: { kind: 'marketStatus', market: m[2] as string, status },
        outcome,
      });
      continue;
    }

    // Everything else is "<user> <verb> …", or a margin step (margin-steps.ts).
    const { body, outcome } = splitOutcome(text, lineNo, fail);
    const marginStep = parseMarginStep(body);
    if (marginStep?.kind === 'marginAction') {
      steps.push({ ...here, kind: 'action', action: { kind: 'margin', build: marginStep.build }, outcome });
      continue;
    }
    if (marginStep?.kind === 'marginExpect') {
      steps.push({ ...here, kind: 'expect', expectation: { kind: 'margin', check: marginStep.check } });
      continue;
    }
    const words = body.split(' ');
    const user = words[0] as string;
    const verb = words[1];
    if (verb === undefined || RESERVED.has(user) || !NAME.test(user)) {
      fail(lineNo, `not a step: '${text}'`);
    }
    const expectLabels = (n: number | undefined): void => {
      if (outcome.kind !== 'order') return;
      if (n === undefined) fail(lineNo, `'-> order' only follows a step that places orders`);
      if (outcome.labels.length !== n) {
        fail(lineNo, `this step places ${n} order(s) but names ${outcome.labels.length} label(s)`);
      }
      for (const label of outcome.labels) {
        if (labels.has(label)) fail(lineNo, `order label '${label}' is already used`);
        labels.add(label);
      }
    };
    const action = parseUserAction(user, body, words, lineNo, fail, needMarket, labels);
    expectLabels(action.kind === 'order' ? 1 : action.kind === 'batch' ? action.orders.length : undefined);
    steps.push({ ...here, kind: 'action', action, outcome });
  }
  return { file, title, venue, steps };
}

function parseUserAction(
  user: string,
  body: string,
  words: string[],
  lineNo: number,
  fail: (line: number, message: string) => never,
  needMarket: (given: string | undefined) => string,
  labels: ReadonlySet<string>,
): Action {
  let m: RegExpExecArray | null;
  if ((m = /^\S+ has (\S+) (\S+)$/.exec(body))) {
    return { kind: 'has', user, amount: m[1] as string, coin: m[2] as string };
  }
  if ((m = /^\S+ deposits (\S+) (\S+) id (\S+)$/.exec(body))) {
    return { kind: 'deposit', user, amount: m[1] as string, coin: m[2] as string, id: m[3] as string };
  }
  if ((m = /^\S+ withdraws (\S+) (\S+) fee (\S+) to (\S+)( itransfer)?$/.exec(body))) {
    return {
      kind: 'withdraw',
      user,
      amount: m[1] as string,
      coin: m[2] as string,
      fee: m[3] as string,
      address: m[4] as string,
      itransfer: m[5] !== undefined,
    };
  }
  if ((m = /^\S+ gets (\S+) address (\S+)(?: memo (\S+))?(?: on (\S+))?$/.exec(body))) {
    return {
      kind: 'address',
      user,
      coin: m[1] as string,
      address: m[2] as string,
      memo: m[3] ?? '',
      chain: m[4],
    };
  }
  if ((m = /^\S+ (books|adds|verifies) (\S+) address (\S+)(?: on (\S+))?$/.exec(body))) {
    const steps = m[1] === 'books' ? 'both' : m[1] === 'adds' ? 'add' : 'verify';
    return { kind: 'book', user, coin: m[2] as string, address: m[3] as string, chain: m[4], steps };
  }
  if ((m = /^\S+ (sets a|enters a wrong) fund password$/.exec(body))) {
    return { kind: 'fundPassword', user, wrong: m[1] !== 'sets a' };
  }
  if ((m = /^\S+ (buys|sells) batch(?: in (\S+))?: (.+)$/.exec(body))) {
    const orders = (m[3] as string).split(',').map((pair) => {
      const p = /^\s*(\S+) @ (\S+)\s*$/.exec(pair);
      return p === null
        ? fail(lineNo, `a batch order must read '<amount> @ <price>', not '${pair.trim()}'`)
        : { amount: p[1] as string, price: p[2] as string };
    });
    return { kind: 'batch', user, side: m[1] === 'buys' ? BUY : SELL, orders, market: needMarket(m[2]) };
  }
  if ((m = /^\S+ (buys|sells) (\S+) @ (\S+)(.*)$/.exec(body))) {
    const mods = (m[4] as string)
      .trim()
      .split(' ')
      .filter((w) => w !== '');
    let orderKind: OrderKind = 'limit';
    let clientOrderId = '';
    let acctType = 0;
    let express = false;
    let inMarket: string | undefined;
    for (let k = 0; k < mods.length; k++) {
      const word = mods[k] as string;
      const value = mods[k + 1];
      if ((word === 'postonly' || word === 'ioc') && orderKind === 'limit') {
        orderKind = word === 'postonly' ? 'postOnly' : 'ioc';
      } else if (word === 'cid' && value !== undefined) {
        clientOrderId = value;
        k++;
      } else if (word === 'acct' && value !== undefined && /^\d$/.test(value)) {
        acctType = Number(value);
        k++;
      } else if (word === 'in' && value !== undefined) {
        inMarket = value;
        k++;
      } else if (word === 'express') {
        express = true;
      } else {
        fail(
          lineNo,
          `unknown order option '${word}': use postonly, ioc, 'cid <id>', 'acct <n>', express or 'in <market>'`,
        );
      }
    }
    return {
      kind: 'order',
      user,
      side: m[1] === 'buys' ? BUY : SELL,
      order: { amount: m[2] as string, price: m[3] as string },
      orderKind,
      clientOrderId,
      acctType,
      express,
      market: needMarket(inMarket),
    };
  }
  if ((m = /^\S+ cancels (?:cid (\S+)|(\S+))(?: in (\S+))?$/.exec(body))) {
    const label = m[2] ?? '';
    if (label !== '' && !labels.has(label)) {
      fail(lineNo, `order label '${label}' is not defined by an earlier '-> order ${label}'`);
    }
    // By label, the order's own market unless told; by cid, the current market unless told.
    const market = label === '' ? needMarket(m[3]) : m[3];
    return { kind: 'cancel', user, label, clientOrderId: m[1] ?? '', market };
  }
  if ((m = /^\S+ arms dead-man on (\S+)$/.exec(body))) {
    return { kind: 'deadman', user, market: m[1] as string };
  }
  if ((m = /^\S+ uses (\S+) for fees$/.exec(body))) {
    return { kind: 'feePreference', user, coin: m[1] as string, on: true };
  }
  if ((m = /^\S+ stops using (\S+) for fees$/.exec(body))) {
    return { kind: 'feePreference', user, coin: m[1] as string, on: false };
  }
  return fail(lineNo, `not a step: '${words.join(' ')}'`);
}

/** `tx …` and `withdrawal …` actions: what the chain reports, and withdrawal steps. */
function parseFundsAction(
  body: string,
  lineNo: number,
  fail: (line: number, message: string) => never,
): Action {
  let m: RegExpExecArray | null;
  if (
    (m =
      /^tx (\S+) pays (\S+) (\S+) to (\S+)(?: memo (\S+))?(?: on (\S+))?(?: with (\d+) confirmations?)?$/.exec(
        body,
      ))
  ) {
    return {
      kind: 'chainPays',
      tx: m[1] as string,
      amount: m[2] as string,
      coin: m[3] as string,
      address: m[4] as string,
      memo: m[5] ?? '',
      chain: m[6],
      confirmations: Number(m[7] ?? 0),
    };
  }
  if ((m = /^tx (\S+) (?:has (\d+) confirmations?|(fails))$/.exec(body))) {
    return {
      kind: 'chainUpdate',
      tx: m[1] as string,
      confirmations: m[3] === undefined ? Number(m[2]) : 'failed',
    };
  }
  const steps = {
    'is approved': 'approve',
    'is cancelled': 'cancel',
    'is being sent': 'send',
    fails: 'fail',
  } as const;
  if ((m = /^withdrawal (\S+) (is approved|is cancelled|is being sent|fails)(?: by (\S+))?$/.exec(body))) {
    const step = steps[m[2] as keyof typeof steps];
    if (m[3] !== undefined && step !== 'cancel') fail(lineNo, `only 'is cancelled' takes 'by <user>'`);
    return { kind: 'withdrawal', id: m[1] as string, step, user: m[3], tx: '', confirmations: 0 };
  }
  if ((m = /^withdrawal (\S+) is sent as tx (\S+)$/.exec(body))) {
    return {
      kind: 'withdrawal',
      id: m[1] as string,
      step: 'sent',
      user: undefined,
      tx: m[2] as string,
      confirmations: 0,
    };
  }
  if ((m = /^withdrawal (\S+) has (\d+) confirmations?$/.exec(body))) {
    const confirmations = Number(m[2]);
    return {
      kind: 'withdrawal',
      id: m[1] as string,
      step: 'confirm',
      user: undefined,
      tx: '',
      confirmations,
    };
  }
  return fail(lineNo, `not a step: '${body}'`);
}

function stripComment(raw: string): string {
  const t = raw.trim();
  if (t.startsWith('#')) return '';
  const hash = t.search(/\s#/);
  return (hash < 0 ? t : t.slice(0, hash)).trim().replace(/\s+/g, ' ');
}

function splitOutcome(
  text: string,
  lineNo: number,
  fail: (line: number, message: string) => never,
): { body: string; outcome: Outcome } {
  const at = text.indexOf('->');
  if (at < 0) return { body: text, outcome: { kind: 'ok' } };
  const body = text.slice(0, at).trim();
  const words = text
    .slice(at + 2)
    .trim()
    .split(' ');
  const [head, ...rest] = words;
  const quoted = /^refused (\S+) "([^"]+)"$/.exec(text.slice(at + 2).trim());
  if (quoted !== null) {
    const name = quoted[1] as string;
    if (!Object.hasOwn(RESULTS, name)) fail(lineNo, `'${name}' is not a result name (see result-codes.ts)`);
    return { body, outcome: { kind: 'refused', result: name as ResultName, message: quoted[2] as string } };
  }
  if (head === 'ok' && rest.length === 0) return { body, outcome: { kind: 'ok' } };
  if (head === 'duplicate' && rest.length === 0) return { body, outcome: { kind: 'duplicate' } };
  if (head === 'refused' && rest.length === 1) {
    const name = rest[0] as string;
    if (!Object.hasOwn(RESULTS, name)) fail(lineNo, `'${name}' is not a result name (see result-codes.ts)`);
    return { body, outcome: { kind: 'refused', result: name as ResultName } };
  }
  if ((head === 'order' && rest.length === 1) || (head === 'orders' && rest.length > 0)) {
    for (const label of rest) {
      if (!LABEL.test(label)) fail(lineNo, `'${label}' is not an order label (letters, digits, _)`);
    }
    return { body, outcome: { kind: 'order', labels: rest } };
  }
  return fail(
    lineNo,
    `unknown outcome '${words.join(' ')}': use ok, duplicate, 'refused <RESULT>', 'order <label>' or 'orders <labels>'`,
  );
}

function parseBookTable(
  table: string[][],
  lineNo: number,
  fail: (line: number, message: string) => never,
): BookRow[] {
  const [header, ...body] = table;
  if (header === undefined || header.join('|') !== BOOK_HEADER.join('|')) {
    // With no rows at all, the 'book:' line itself is at fault.
    fail(
      header === undefined ? lineNo : lineNo + 1,
      `a book table starts with the row '| bid | price | ask |'`,
    );
  }
  if (body.length === 0) fail(lineNo, `a book table needs at least one level (or write 'book: empty')`);
  return body.map((cells, k) => {
    const row = lineNo + 2 + k;
    const [bid, price, ask] = cells;
    if (cells.length !== 3 || price === undefined || price === '')
      fail(row, 'a book row needs bid, price and ask cells');
    if ((bid === '') === (ask === '')) fail(row, 'a book row has an amount in exactly one of bid and ask');
    return bid !== ''
      ? { side: BUY, price: price as string, amount: bid as string }
      : { side: SELL, price: price as string, amount: ask as string };
  });
}

function parseTradesTable(
  table: string[][],
  lineNo: number,
  fail: (line: number, message: string) => never,
): TradeRow[] {
  const [header, ...body] = table;
  if (header === undefined || header.join('|') !== TRADES_HEADER.join('|')) {
    fail(
      header === undefined ? lineNo : lineNo + 1,
      `a trades table starts with the row '| ${TRADES_HEADER.join(' | ')} |'`,
    );
  }
  if (body.length === 0) fail(lineNo, `a trades table needs at least one trade (or write 'trades: none')`);
  return body.map((cells, k) => {
    const row = lineNo + 2 + k;
    if (cells.length !== 6) fail(row, `a trades row has 6 cells: ${TRADES_HEADER.join(', ')}`);
    const [price, amount, taker, maker, takerFee, makerFee] = cells as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const t = /^(\S+) (buys|sells)$/.exec(taker);
    if (t === null) fail(row, `the taker cell reads '<user> buys' or '<user> sells', not '${taker}'`);
    const tf = /^(\S+) (\S+)$/.exec(takerFee);
    const mf = /^(\S+) (\S+)$/.exec(makerFee);
    if (tf === null || mf === null) fail(row, `a fee cell reads '<amount> <coin>', such as '0.00020000 btc'`);
    return {
      price,
      amount,
      taker: (t as RegExpExecArray)[1] as string,
      takerSide: (t as RegExpExecArray)[2] === 'buys' ? BUY : SELL,
      maker,
      takerFee: (tf as RegExpExecArray)[1] as string,
      takerFeeCoin: (tf as RegExpExecArray)[2] as string,
      makerFee: (mf as RegExpExecArray)[1] as string,
      makerFeeCoin: (mf as RegExpExecArray)[2] as string,
    };
  });
}

// ───────────────────────────── running ─────────────────────────────

interface OrderRef {
  readonly id: number;
  readonly market: string;
}

/** Runs a parsed scenario against a fresh engine on its venue. Throws a `ScenarioError` on the first failure. */
export function runScenario(scenario: Scenario): void {
  new ScenarioRun(scenario).run();
}

/** Reads, parses and runs one `*.scenario` file. */
export function runScenarioFile(path: string): void {
  runScenario(parseScenario(readFileSync(path, 'utf8'), basename(path)));
}

class ScenarioRun {
  readonly #scenario: Scenario;
  readonly #engine: Engine;
  /** What margin steps use of the run (margin-steps.ts). */
  readonly #marginPort: MarginPort;
  #seq = 0;
  #clock = SCENARIO_START_MS - 1;
  #gap: number | undefined;
  #line = 0;
  #hasCount = 0;
  readonly #users = new Map<string, number>();
  readonly #orders = new Map<string, OrderRef>();
  readonly #labelById = new Map<number, string>();
  /** Each order's latest state, from its events (closed orders leave the engine's memory). */
  readonly #orderStates = new Map<number, { status: OrderStatus; filled: number }>();
  /** Closed loan records, from their LoanClosed events (the engine keeps open records only). */
  readonly #closedLoans = new Map<number, LoanRecord>();
  /** The latest report of each chain deposit, by transaction hash. */
  readonly #txs = new Map<string, ReportDeposit>();
  /** Trades not yet checked by a `trades` expectation, per market. */
  readonly #pendingTrades = new Map<string, TradeExecuted[]>();

  constructor(scenario: Scenario) {
    this.#scenario = scenario;
    this.#engine = new Engine(scenario.venue);
    this.#marginPort = {
      engine: this.#engine,
      userId: (name) => this.#userId(name),
      coinUnits: (text, coin) => this.#coinUnits(text, coin),
      loan: (id) => this.#engine.margin.loan(id) ?? this.#closedLoans.get(id),
      fail: (message) => this.#fail(message),
    };
  }

  run(): void {
    for (const step of this.#scenario.steps) {
      this.#line = step.line;
      if (step.kind === 'time') {
        this.#gap = (this.#gap ?? 0) + step.ms;
        continue;
      }
      try {
        if (step.kind === 'action') this.#act(step.action, step.outcome, step.text);
        else this.#check(step.expectation);
      } catch (e) {
        if (e instanceof ScenarioError) throw e;
        // An engine exception is a broken invariant: report it at the step that caused it.
        this.#fail(`the engine threw on '${step.text}': ${(e as Error).message}`);
      }
      try {
        this.#engine.assertInvariants();
      } catch (e) {
        this.#fail(`invariant broken after '${step.text}': ${(e as Error).message}`);
      }
    }
    const restored = Engine.restore(this.#engine.snapshot());
    if (restored.stateHash() !== this.#engine.stateHash()) {
      this.#fail('the engine restored from its snapshot has a different state hash');
    }
  }

  #fail(message: string): never {
    throw new ScenarioError(this.#scenario.file, this.#line, message);
  }

  #apply(cmd: Command): ApplyResult {
    this.#clock += this.#gap ?? 1;
    this.#gap = undefined;
    const result = this.#engine.apply({ ...cmd, seq: ++this.#seq, time: this.#clock });
    for (const e of result.events) this.#record(e);
    return result;
  }

  #record(e: EngineEvent): void {
    if (e.type === 'LoanClosed') this.#closedLoans.set(e.loan.id, e.loan);
    else if (e.type === 'OrderAccepted') this.#orderStates.set(e.orderId, { status: 0, filled: 0 });
    else if (e.type === 'OrderUpdated')
      this.#orderStates.set(e.orderId, { status: e.status, filled: e.filled });
    else if (e.type === 'TradeExecuted') {
      const list = this.#pendingTrades.get(e.market) ?? [];
      list.push(e);
      this.#pendingTrades.set(e.market, list);
    }
  }

  #userId(name: string): number {
    const known = this.#users.get(name);
    if (known !== undefined) return known;
    const r = this.#apply({ type: 'RegisterUser', name });
    if (r.result !== 'OK' || r.userId === undefined)
      this.#fail(`could not register user '${name}': ${r.result}`);
    this.#users.set(name, r.userId);
    return r.userId;
  }

  #knownUser(name: string): number {
    return this.#users.get(name) ?? this.#fail(`no user '${name}' has acted yet`);
  }

  #market(name: string): MarketSpec {
    return this.#engine.market(name) ?? this.#fail(`unknown market '${name}'`);
  }

  #coinDecimals(coin: string): number {
    return this.#engine.coin(coin)?.unitDecimal ?? this.#fail(`unknown coin '${coin}'`);
  }

  /** Decimal text → integer units; a scenario with text that does not fit the scale is malformed. */
  #units(text: string, scale: number, what: string): number {
    return (
      parseDecimal(text, scale) ??
      this.#fail(`${what} '${text}' is not a decimal with at most ${scale} decimals`)
    );
  }

  #coinUnits(text: string, coin: string): number {
    return this.#units(text, this.#coinDecimals(coin), `${coin} amount`);
  }

  /** Like `#coinUnits`, but lets a command name an unknown coin so that the engine refuses it. */
  #fundsUnits(text: string, coin: string): number {
    // The engine checks the coin before it reads any amount, so this placeholder is never used.
    if (this.#engine.coin(coin) === undefined) return 1;
    return this.#coinUnits(text, coin);
  }

  #act(action: Action, outcome: Outcome, text: string): void {
    switch (action.kind) {
      case 'has': {
        const userId = this.#userId(action.user);
        const amount = this.#coinUnits(action.amount, action.coin);
        this.#hasCount++;
        const depositId = `scenario-has-${this.#hasCount}`;
        this.#expect(text, outcome, () =>
          this.#apply({ type: 'CreditDeposit', depositId, userId, coin: action.coin, amount, remark: '' }),
        );
        return;
      }
      case 'deposit': {
        const userId = this.#userId(action.user);
        const amount = this.#fundsUnits(action.amount, action.coin);
        this.#expect(text, outcome, () =>
          this.#apply({
            type: 'CreditDeposit',
            depositId: action.id,
            userId,
            coin: action.coin,
            amount,
            remark: '',
          }),
        );
        return;
      }
      case 'address': {
        const userId = this.#userId(action.user);
        const chain = this.#chainName(action.coin, action.chain);
        this.#expect(text, outcome, () =>
          this.#apply({
            type: 'AssignDepositAddress',
            userId,
            coin: action.coin,
            chain,
            address: action.address,
            memo: action.memo,
          }),
        );
        return;
      }
      case 'chainPays': {
        const report = {
          type: 'ReportDeposit' as const,
          coin: action.coin,
          chain: this.#chainName(action.coin, action.chain),
          txHash: action.tx,
          output: 0,
          address: action.address,
          memo: action.memo,
          amount: this.#fundsUnits(action.amount, action.coin),
          confirmations: action.confirmations,
          failed: false,
        };
        this.#txs.set(action.tx, report);
        this.#expect(text, outcome, () => this.#apply(report));
        return;
      }
      case 'chainUpdate': {
        const report = this.#txs.get(action.tx) ?? this.#fail(`tx ${action.tx} has not paid anything yet`);
        const failed = action.confirmations === 'failed';
        const confirmations = failed ? report.confirmations : (action.confirmations as number);
        const next = { ...report, confirmations, failed };
        this.#txs.set(action.tx, next);
        this.#expect(text, outcome, () => this.#apply(next));
        return;
      }
      case 'book': {
        const userId = this.#userId(action.user);
        const chain = this.#chainName(action.coin, action.chain);
        const { coin, address } = action;
        if (action.steps !== 'verify') {
          this.#expect(text, action.steps === 'add' ? outcome : { kind: 'ok' }, () =>
            this.#apply({ type: 'AddWithdrawAddress', userId, coin, chain, address }),
          );
        }
        if (action.steps !== 'add') {
          this.#expect(text, outcome, () =>
            this.#apply({ type: 'VerifyWithdrawAddress', userId, coin, address }),
          );
        }
        return;
      }
      case 'fundPassword': {
        const userId = this.#userId(action.user);
        this.#expect(text, outcome, () =>
          this.#apply(
            action.wrong
              ? { type: 'RecordFundPasswordFailure', userId }
              : { type: 'SetFundPassword', userId, hash: `scenario-hash-${action.user}` },
          ),
        );
        return;
      }
      case 'withdraw': {
        const userId = this.#userId(action.user);
        const amount = this.#fundsUnits(action.amount, action.coin);
        const fee = this.#fundsUnits(action.fee, action.coin);
        this.#expect(text, outcome, () =>
          this.#apply({
            type: 'RequestWithdrawal',
            userId,
            coin: action.coin,
            address: action.address,
            amount,
            fee,
            itransfer: action.itransfer,
          }),
        );
        return;
      }
      case 'withdrawal':
        this.#expect(text, outcome, () => this.#apply(this.#withdrawalCommand(action)));
        return;
      case 'order':
        this.#placeOrder(action, outcome, text);
        return;
      case 'batch':
        this.#placeBatch(action, outcome, text);
        return;
      case 'cancel': {
        const userId = this.#userId(action.user);
        const ref = action.label === '' ? undefined : (this.#orders.get(action.label) as OrderRef);
        const market = action.market ?? ref?.market ?? this.#fail(`'${text}' needs 'in <market>'`);
        this.#expect(text, outcome, () =>
          this.#apply({
            type: 'CancelOrder',
            userId,
            market,
            orderId: ref?.id ?? 0,
            clientOrderId: action.clientOrderId,
          }),
        );
        return;
      }
      case 'deadman': {
        const userId = this.#userId(action.user);
        this.#expect(text, outcome, () =>
          this.#apply({ type: 'CancelAllOrdersAfter', userId, market: action.market }),
        );
        return;
      }
      case 'margin':
        this.#expect(text, outcome, () => this.#apply(action.build(this.#marginPort)));
        return;
      case 'fire':
        this.#expect(text, outcome, () => this.#apply({ type: 'FireTimers' }));
        return;
      case 'feePreference': {
        const platformCoin = this.#engine.settings.platformCoin;
        if (action.coin !== platformCoin)
          this.#fail(`fees can be paid in ${platformCoin}, not ${action.coin}`);
        const userId = this.#userId(action.user);
        this.#expect(text, outcome, () =>
          this.#apply({ type: 'SetFeePreference', userId, usePlatformCoin: action.on }),
        );
        return;
      }
      case 'marketStatus':
        this.#expect(text, outcome, () =>
          this.#apply({ type: 'SetMarketStatus', market: action.market, status: action.status }),
        );
        return;
    }
  }

  #withdrawalCommand(action: Extract<Action, { kind: 'withdrawal' }>): Command {
    const withdrawalId = action.id;
    switch (action.step) {
      case 'approve':
        return { type: 'ApproveWithdrawal', withdrawalId };
      case 'cancel':
        return action.user === undefined
          ? { type: 'CancelWithdrawal', withdrawalId }
          : { type: 'CancelWithdrawal', withdrawalId, userId: this.#knownUser(action.user) };
      case 'send':
        return { type: 'SendWithdrawal', withdrawalId };
      case 'sent':
        return { type: 'MarkWithdrawalSent', withdrawalId, txHash: action.tx };
      case 'confirm':
        return { type: 'ConfirmWithdrawal', withdrawalId, confirmations: action.confirmations };
      case 'fail':
        return { type: 'FailWithdrawal', withdrawalId, reason: 'the transaction failed on chain' };
    }
  }

  /** The chain a step names, or the coin's first (an unknown coin passes through for the engine to refuse). */
  #chainName(coin: string, chain: string | undefined): string {
    return chain ?? this.#engine.funds.coinFunds(coin)?.chains[0]?.name ?? '';
  }

  #placeOrder(action: Extract<Action, { kind: 'order' }>, outcome: Outcome, text: string): void {
    const userId = this.#userId(action.user);
    const spec = this.#engine.market(action.market);
    let price: number;
    let amount: number;
    if (spec === undefined) {
      // The engine refuses an unknown market before it reads any number, so placeholders are never used.
      price = 1;
      amount = 1;
    } else {
      const parsed = parseOrderNumbers(spec, action.order.price, action.order.amount);
      if (!parsed.ok) {
        this.#expectEdgeRefusal(text, outcome, parsed.result, parsed.message);
        return;
      }
      price = parsed.price;
      amount = parsed.amount;
    }
    const r = this.#expect(text, outcome, () =>
      this.#apply({
        type: 'PlaceOrder',
        userId,
        market: action.market,
        side: action.side,
        kind: action.orderKind,
        price,
        amount,
        acctType: action.acctType as AcctType,
        clientOrderId: action.clientOrderId,
        ...(action.express ? { express: true } : {}),
      }),
    );
    if (r.orderId !== undefined) this.#remember(outcome, [r.orderId], action.market);
  }

  #placeBatch(action: Extract<Action, { kind: 'batch' }>, outcome: Outcome, text: string): void {
    const userId = this.#userId(action.user);
    const spec = this.#engine.market(action.market);
    const orders: { price: number; amount: number }[] = [];
    for (const [k, o] of action.orders.entries()) {
      if (spec === undefined) {
        // As for a single order: the engine refuses the unknown market before reading numbers.
        orders.push({ price: 1, amount: 1 });
        continue;
      }
      const parsed = parseOrderNumbers(spec, o.price, o.amount);
      if (!parsed.ok) {
        this.#expectEdgeRefusal(
          text,
          outcome,
          parsed.result,
          `order ${k + 1} of the batch: ${parsed.message}`,
        );
        return;
      }
      orders.push({ price: parsed.price, amount: parsed.amount });
    }
    const r = this.#expect(text, outcome, () =>
      this.#apply({
        type: 'PlaceOrderBatch',
        userId,
        market: action.market,
        side: action.side,
        acctType: 0,
        orders,
      }),
    );
    if (r.orderIds !== undefined) this.#remember(outcome, r.orderIds, action.market);
  }

  #remember(outcome: Outcome, ids: readonly number[], market: string): void {
    if (outcome.kind !== 'order') return;
    outcome.labels.forEach((label, k) => {
      const id = ids[k] as number;
      this.#orders.set(label, { id, market });
      this.#labelById.set(id, label);
    });
  }

  /** A refusal the API edge makes before any command reaches the engine. */
  #expectEdgeRefusal(text: string, outcome: Outcome, result: ResultName, message: string): void {
    if (outcome.kind !== 'refused' || outcome.result !== result) {
      this.#fail(
        `'${text}' was refused at the API edge with ${result} (${message}), expected ${describe(outcome)}`,
      );
    }
  }

  /** Runs one command and checks its outcome; a refusal must leave the state exactly as it was. */
  #expect(text: string, outcome: Outcome, run: () => ApplyResult): ApplyResult {
    const before = outcome.kind === 'refused' ? this.#stateWithoutSeq() : undefined;
    const r = run();
    const got =
      r.result !== 'OK'
        ? `refused ${r.result}${r.message === undefined ? '' : ` (${r.message})`}`
        : r.duplicate === true
          ? 'duplicate'
          : 'ok';
    const wanted =
      outcome.kind === 'refused'
        ? `refused ${outcome.result}`
        : outcome.kind === 'duplicate'
          ? 'duplicate'
          : 'ok';
    const matches =
      outcome.kind === 'refused'
        ? r.result === outcome.result &&
          (outcome.message === undefined || (r.message ?? '').includes(outcome.message))
        : got === wanted;
    if (!matches) this.#fail(`'${text}': expected ${describe(outcome)}, got ${got}`);
    if (before !== undefined) {
      if (r.events.length > 0) this.#fail(`'${text}' was refused but emitted ${r.events.length} event(s)`);
      if (this.#stateWithoutSeq() !== before) this.#fail(`'${text}' was refused but changed the state`);
    }
    return r;
  }

  #stateWithoutSeq(): string {
    const { lastSeq: _lastSeq, ...rest } = this.#engine.snapshot();
    return JSON.stringify(rest);
  }

  #check(x: Expectation): void {
    switch (x.kind) {
      case 'margin':
        x.check(this.#marginPort);
        return;
      case 'book':
        this.#checkBook(x.market, x.rows);
        return;
      case 'trades':
        this.#checkTrades(x.market, x.rows);
        return;
      case 'balance': {
        const userId = this.#knownUser(x.user);
        const dec = this.#coinDecimals(x.coin);
        const actual =
          this.#engine.balance(userId, x.coin) ?? this.#fail(`no balance for ${x.user} ${x.coin}`);
        const available = this.#coinUnits(x.available, x.coin);
        const frozen = this.#coinUnits(x.frozen, x.coin);
        if (actual.available !== available || actual.frozen !== frozen) {
          this.#fail(
            `balance ${x.user} ${x.coin}: expected available ${formatUnits(available, dec)} frozen ${formatUnits(frozen, dec)}, ` +
              `got available ${formatUnits(actual.available, dec)} frozen ${formatUnits(actual.frozen, dec)}`,
          );
        }
        return;
      }
      case 'feeIncome': {
        const dec = this.#coinDecimals(x.coin);
        const expected = this.#coinUnits(x.amount, x.coin);
        const actual = this.#engine.feeIncome(x.coin);
        if (actual !== expected) {
          this.#fail(
            `fee income ${x.coin}: expected ${formatUnits(expected, dec)}, got ${formatUnits(actual, dec)}`,
          );
        }
        return;
      }
      case 'orderState': {
        const ref = this.#orders.get(x.label) ?? this.#fail(`order ${x.label} was never placed`);
        const spec = this.#market(ref.market);
        const open = this.#engine.openOrder(ref.id);
        const state =
          open !== undefined ? { status: open.status, filled: open.filled } : this.#orderStates.get(ref.id);
        if (state === undefined) this.#fail(`no state known for order ${x.label}`);
        const filled =
          x.filled === undefined ? state.filled : this.#units(x.filled, spec.amountScale, 'filled amount');
        if (state.status !== x.status || state.filled !== filled) {
          this.#fail(
            `order ${x.label}: expected status ${x.status} filled ${formatUnits(filled, spec.amountScale)}, ` +
              `got status ${state.status} filled ${formatUnits(state.filled, spec.amountScale)}`,
          );
        }
        return;
      }
      case 'openOrders': {
        const userId = this.#knownUser(x.user);
        if (x.market !== undefined) this.#market(x.market);
        const actual = this.#engine
          .openOrders(userId, x.market)
          .map((o) => this.#labelById.get(o.id) ?? `#${o.id}`);
        if (actual.join(' ') !== x.labels.join(' ')) {
          this.#fail(
            `open orders of ${x.user}: expected ${x.labels.join(' ') || 'none'}, got ${actual.join(' ') || 'none'}`,
          );
        }
        return;
      }
      case 'lastPrice': {
        const spec = this.#market(x.market);
        const expected = x.price === undefined ? 0 : this.#units(x.price, spec.priceScale, 'price');
        const actual = this.#engine.lastPrice(x.market);
        if (actual !== expected) {
          const show = (p: number): string => (p === 0 ? 'none' : formatUnits(p, spec.priceScale));
          this.#fail(`last price ${x.market}: expected ${show(expected)}, got ${show(actual)}`);
        }
        return;
      }
      case 'ledger':
        this.#checkLedger(x);
        return;
      case 'withdrawalState': {
        const state = this.#engine.funds.withdrawal(x.id)?.state ?? 'unknown';
        if (state !== x.state) this.#fail(`withdrawal ${x.id}: expected ${x.state}, got ${state}`);
        return;
      }
      case 'depositState': {
        const report = this.#txs.get(x.tx) ?? this.#fail(`tx ${x.tx} has not paid anything yet`);
        const id = chainDepositId(report.coin, report.chain, report.txHash, report.output);
        const state = this.#engine.funds.deposit(id)?.state ?? 'unknown';
        if (state !== x.state) this.#fail(`tx ${x.tx}: expected ${x.state}, got ${state}`);
        return;
      }
    }
  }

  #checkLedger(x: Extract<Expectation, { kind: 'ledger' }>): void {
    const dec = this.#coinDecimals(x.coin);
    const users = BigInt(this.#coinUnits(x.users, x.coin));
    const fees = this.#coinUnits(x.fees, x.coin);
    const deposits = this.#coinUnits(x.deposits, x.coin);
    const withdrawals = this.#coinUnits(x.withdrawals, x.coin);
    if (users + BigInt(fees) !== BigInt(deposits) - BigInt(withdrawals)) {
      this.#fail(`ledger ${x.coin}: the line as written does not add up`);
    }
    const t = this.#engine.totals(x.coin) ?? this.#fail(`unknown coin '${x.coin}'`);
    if (
      t.users !== users ||
      t.feeIncome !== fees ||
      t.credited !== BigInt(deposits) ||
      t.withdrawn !== BigInt(withdrawals)
    ) {
      const f = (u: number | bigint): string => formatUnits(Number(u), dec);
      this.#fail(
        `ledger ${x.coin}: got users ${f(t.users)} + fees ${f(t.feeIncome)} = deposits ${f(t.credited)} - withdrawals ${f(t.withdrawn)}`,
      );
    }
  }

  #checkBook(market: string, rows: readonly BookRow[]): void {
    const spec = this.#market(market);
    const depth =
      this.#engine.depth(market, Number.MAX_SAFE_INTEGER) ?? this.#fail(`unknown market '${market}'`);
    // A ladder: asks above bids, highest price first.
    const actual = [
      ...[...depth.asks].reverse().map(([price, lots]) => ({ side: SELL as Side, price, lots })),
      ...depth.bids.map(([price, lots]) => ({ side: BUY as Side, price, lots })),
    ];
    const expected = rows.map((r) => ({
      side: r.side,
      price: this.#units(r.price, spec.priceScale, 'price'),
      lots: this.#units(r.amount, spec.amountScale, 'amount'),
    }));
    const same =
      actual.length === expected.length &&
      actual.every((a, k) => {
        const e = expected[k];
        return e !== undefined && a.side === e.side && a.price === e.price && a.lots === e.lots;
      });
    if (!same) {
      const table =
        actual.length === 0
          ? '  (empty)'
          : ['  | bid | price | ask |']
              .concat(
                actual.map((a) => {
                  const lots = formatUnits(a.lots, spec.amountScale);
                  const price = formatUnits(a.price, spec.priceScale);
                  return a.side === BUY ? `  | ${lots} | ${price} |  |` : `  |  | ${price} | ${lots} |`;
                }),
              )
              .join('\n');
      this.#fail(`book ${market} differs; the engine's book is:\n${table}`);
    }
  }

  #checkTrades(market: string, rows: readonly TradeRow[]): void {
    const spec = this.#market(market);
    const trades = this.#pendingTrades.get(market) ?? [];
    this.#pendingTrades.set(market, []);
    const name = (userId: number): string => this.#engine.userName(userId) ?? `user ${userId}`;
    const fee = (units: number, coin: string): string =>
      `${formatUnits(units, this.#coinDecimals(coin))} ${coin}`;
    const show = (t: TradeExecuted): string =>
      `  | ${formatUnits(t.price, spec.priceScale)} | ${formatUnits(t.amount, spec.amountScale)} | ` +
      `${name(t.takerUserId)} ${t.takerSide === BUY ? 'buys' : 'sells'} | ${name(t.makerUserId)} | ` +
      `${fee(t.takerFee, t.takerFeeCoin)} | ${fee(t.makerFee, t.makerFeeCoin)} |`;
    const matches = (t: TradeExecuted, r: TradeRow): boolean =>
      t.price === this.#units(r.price, spec.priceScale, 'price') &&
      t.amount === this.#units(r.amount, spec.amountScale, 'amount') &&
      name(t.takerUserId) === r.taker &&
      t.takerSide === r.takerSide &&
      name(t.makerUserId) === r.maker &&
      t.takerFeeCoin === r.takerFeeCoin &&
      t.takerFee === this.#coinUnits(r.takerFee, r.takerFeeCoin) &&
      t.makerFeeCoin === r.makerFeeCoin &&
      t.makerFee === this.#coinUnits(r.makerFee, r.makerFeeCoin);
    const same = trades.length === rows.length && trades.every((t, k) => matches(t, rows[k] as TradeRow));
    if (!same) {
      const table =
        trades.length === 0
          ? '  (none)'
          : [`  | ${TRADES_HEADER.join(' | ')} |`].concat(trades.map(show)).join('\n');
      this.#fail(`trades in ${market} since the last check differ; the engine's trades are:\n${table}`);
    }
  }
}

function describe(outcome: Outcome): string {
  switch (outcome.kind) {
    case 'ok':
      return 'ok';
    case 'duplicate':
      return 'duplicate';
    case 'refused':
      return `refused ${outcome.result}${outcome.message === undefined ? '' : ` "${outcome.message}"`}`;
    case 'order':
      return outcome.labels.length === 1
        ? `order ${outcome.labels[0]}`
        : `orders ${outcome.labels.join(' ')}`;
  }
}
