import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

const CLI = join(import.meta.dirname, 'main.ts');
const root = mkdtempSync(join(tmpdir(), 'bourse-secret-'));
const data = join(root, 'data');
let server: Server;
let url = '';
/** The form bodies the fake admin API received. */
const bodies: string[] = [];

before(async () => {
  mkdirSync(data);
  writeFileSync(join(data, 'admin.token'), 'token\n', { mode: 0o600 });
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.setHeader('content-type', 'application/json');
      res.end('{"code":1000,"message":"success"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

after(() => {
  server.close();
  rmSync(root, { recursive: true, force: true });
});

const ARGS = ['fund-password', 'set', 'alice', '--data', data];

/** Runs the CLI with `input` on a piped standard input. */
function withStdin(input: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...ARGS, '--url', url], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

describe('fund-password set reads the password from standard input', () => {
  test('its first line, the newline dropped', async () => {
    bodies.length = 0;
    const r = await withStdin('correct horse\n');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'fund password of alice set\n');
    assert.deepEqual(bodies, ['user=alice&password=correct+horse']);
  });

  test('only the first line is read; empty input is refused and nothing is sent', async () => {
    bodies.length = 0;
    const two = await withStdin('first-line\r\nsecond line\n');
    assert.equal(two.code, 0, two.err);
    assert.deepEqual(bodies, ['user=alice&password=first-line']);
    bodies.length = 0;
    const empty = await withStdin('');
    assert.equal(empty.code, 1);
    assert.match(empty.err, /standard input is empty/);
    assert.deepEqual(bodies, []);
  });

  test('an input left open does not hang the CLI once the line is given', async () => {
    bodies.length = 0;
    const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, ...ARGS, '--url', url], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      child.once('exit', (code) => {
        child.stdin.destroy();
        resolve({ code, err });
      });
      child.stdin.write('kept-open\n');
    });
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(bodies, ['user=alice&password=kept-open']);
  });
});

// `script` (util-linux) gives the CLI a terminal, as an operator's shell does.
const hasScript = spawnSync('script', ['--version']).status === 0;
const noScript = hasScript
  ? false
  : process.env['CI'] === 'true'
    ? false
    : 'skipped: the `script` command (util-linux) is not installed, so no terminal can be simulated';

describe('fund-password set on a terminal', { skip: noScript }, () => {
  /**
   * Runs the CLI under `script`, typing each answer after its prompt appears (`ahead`: all of them
   * after the first prompt, as a fast typist does); resolves with what the terminal showed.
   */
  function onTerminal(answers: string[], ahead = false): Promise<{ code: number | null; screen: string }> {
    const command = [process.execPath, CLI, ...ARGS, '--url', url].map((a) => `'${a}'`).join(' ');
    return new Promise((resolve) => {
      const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let screen = '';
      let prompts = 0;
      child.stdout.on('data', (c: Buffer) => {
        screen += c.toString();
        // Answer a prompt only once it is shown: the terminal is in no-echo mode by then.
        const shown =
          ahead && screen.includes('fund password for alice')
            ? answers.length
            : screen.split('fund password for alice').length - 1;
        while (prompts < shown && prompts < answers.length) child.stdin.write(`${answers[prompts++]}\r`);
      });
      child.once('exit', (code) => {
        child.stdin.end();
        resolve({ code, screen });
      });
    });
  }

  test('typed twice without echo', async () => {
    bodies.length = 0;
    const r = await onTerminal(['Tr0ub4dor&3', 'Tr0ub4dor&3']);
    assert.equal(r.code, 0, r.screen);
    assert.match(r.screen, /fund password for alice: /);
    assert.match(r.screen, /fund password for alice \(again\): /);
    assert.ok(!r.screen.includes('Tr0ub4dor'), `the password was echoed: ${r.screen}`);
    assert.deepEqual(bodies, ['user=alice&password=Tr0ub4dor%263']);
  });

  test('typed ahead of the second prompt: still no echo, both lines read', async () => {
    bodies.length = 0;
    const r = await onTerminal(['ahead-of-time', 'ahead-of-time'], true);
    assert.equal(r.code, 0, r.screen);
    assert.ok(!r.screen.includes('ahead-of-time'), `the password was echoed: ${r.screen}`);
    assert.deepEqual(bodies, ['user=alice&password=ahead-of-time']);
  });

  test('two different entries change nothing', async () => {
    bodies.length = 0;
    const r = await onTerminal(['first-try', 'second-try']);
    assert.equal(r.code, 1);
    assert.match(r.screen, /the two entries differ: nothing was changed/);
    assert.deepEqual(bodies, []);
  });
});
