import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { loadOptions } from '../config/options.ts';
import { createLogger, prettyLine } from './logger.ts';
import { progressReporter } from './progress.ts';
import { refusalLevel } from './refusal-levels.ts';

function capture(): { stream: Writable; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== ''),
  };
}

describe('logger', () => {
  test('JSON lines carry time, level name, pid, hostname, component, msg and the fields given', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', format: 'json', stream: out.stream });
    logger.component('journal').info({ seq: 7, path: '/x' }, 'something happened');
    logger.component('sequencer').error({ err: new Error('boom') }, 'it failed');
    const [first, second] = out.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(Object.keys(first ?? {}), [
      'level',
      'time',
      'pid',
      'hostname',
      'component',
      'seq',
      'path',
      'msg',
    ]);
    assert.equal(first?.['level'], 'info');
    assert.match(String(first?.['time']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(first?.['pid'], process.pid);
    assert.equal(first?.['component'], 'journal');
    assert.equal(first?.['msg'], 'something happened');
    assert.equal(second?.['level'], 'error');
    const err = second?.['err'] as { type: string; message: string; stack: string };
    assert.equal(err.message, 'boom');
    assert.match(err.stack, /Error: boom/);
  });

  test('--log-level filters: lines below the level are not written', () => {
    for (const [argv, expected] of [
      [[], ['info', 'warn', 'error', 'fatal']],
      [
        ['--log-level', 'warn'],
        ['warn', 'error', 'fatal'],
      ],
      [['--log-level=debug'], ['debug', 'info', 'warn', 'error', 'fatal']],
      [['--log-level', 'silent'], []],
    ] as const) {
      const options = loadOptions(argv, {});
      const out = capture();
      const { log } = createLogger({ level: options.logLevel, format: 'json', stream: out.stream });
      for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) log[level](level);
      assert.deepEqual(
        out.lines().map((l) => (JSON.parse(l) as { level: string }).level),
        expected,
        argv.join(' '),
      );
    }
    assert.equal(loadOptions([], { BOURSE_LOG_LEVEL: 'error' }).logLevel, 'error');
    assert.throws(
      () => loadOptions(['--log-level', 'loud', '--log-format', 'xml'], {}),
      (e: Error) =>
        /--log-level: expected one of trace, debug, info, warn, error, fatal, silent, got 'loud'/.test(
          e.message,
        ) && /--log-format: expected one of auto, json, pretty, got 'xml'/.test(e.message),
    );
  });

  test('the pretty form: time of day, level, component, message, then the fields and a stack', () => {
    const out = capture();
    const { log } = createLogger({ level: 'info', format: 'pretty', stream: out.stream });
    log.child({ component: 'ws' }).warn({ ip: '10.0.0.1', unsentBytes: 2048 }, 'dropped a slow consumer');
    log.error({ err: new Error('boom') }, 'failed');
    const text = out.lines();
    assert.match(
      text[0] ?? '',
      /^\d\d:\d\d:\d\d\.\d{3} WARN {2}ws: dropped a slow consumer {2}ip=10\.0\.0\.1 unsentBytes=2048$/,
    );
    assert.match(text[1] ?? '', /^\d\d:\d\d:\d\d\.\d{3} ERROR failed$/);
    assert.match(text[2] ?? '', /^ {4}Error: boom$/);
    assert.equal(prettyLine('not json'), 'not json\n');
  });
});

describe('refusal levels', () => {
  test('key, permission and fund-password refusals at warn; the client clock at info; the rest at debug', () => {
    assert.equal(refusalLevel('AUTH_FAILED'), 'warn');
    assert.equal(refusalLevel('IP_NOT_BOUND'), 'warn');
    assert.equal(refusalLevel('PERMISSION_DENIED'), 'warn');
    assert.equal(refusalLevel('FUND_PASSWORD_WRONG'), 'warn');
    assert.equal(refusalLevel('REQUEST_EXPIRED'), 'info');
    assert.equal(refusalLevel('INTERNAL_ERROR'), 'error');
    for (const quiet of [
      'INSUFFICIENT_BALANCE',
      'ORDER_NOT_FOUND',
      'INVALID_PRICE',
      'BUSY',
      'RATE_LIMITED',
    ] as const) {
      assert.equal(refusalLevel(quiet), 'debug', quiet);
    }
  });
});

describe('progress', () => {
  test('on a terminal: one line redrawn in place with done/total, rate and ETA, a newline when done', () => {
    let now = 0;
    let drawn = '';
    const report = progressReporter({
      label: 'replay',
      unit: 'commands',
      tty: { write: (t: string) => (drawn += t) },
      now: () => now,
    });
    now = 1_000;
    report(250_000, 1_000_000);
    now = 1_050;
    report(260_000, 1_000_000); // within the redraw interval: not drawn
    now = 2_000;
    report(1_000_000, 1_000_000);
    assert.equal(
      drawn,
      '\rreplay 250000/1000000 (25%), 250000 commands/s, ETA 3.0 s\x1b[K' +
        '\rreplay 1000000/1000000 (100%), 500000 commands/s, done\x1b[K\n',
    );
  });

  test('elsewhere: a plain line at most every interval, and the last one', () => {
    let now = 0;
    const lines: string[] = [];
    const report = progressReporter({
      label: 'rebuild-history',
      unit: 'commands',
      line: (text, figures) => lines.push(`${text} | eta ${figures.etaSeconds}`),
      everyMs: 5_000,
      now: () => now,
    });
    for (let t = 1; t <= 12; t++) {
      now = t * 1_000;
      report(t * 10_000, 120_000);
    }
    assert.deepEqual(lines, [
      'rebuild-history 50000/120000 (41%), 10000 commands/s, ETA 7.0 s | eta 7',
      'rebuild-history 100000/120000 (83%), 10000 commands/s, ETA 2.0 s | eta 2',
      'rebuild-history 120000/120000 (100%), 10000 commands/s, done | eta 0',
    ]);
  });
});
