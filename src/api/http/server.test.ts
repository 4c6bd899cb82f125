import assert from 'node:assert/strict';
import { request as httpRequest, Agent } from 'node:http';
import { describe, test } from 'node:test';
import { inject } from 'light-my-request';
import { decodeComponent, parseParams } from './params.ts';
import { createRequestHandler, startHttpServer } from './server.ts';
import { memoryLog } from '../../observability/memory-log.ts';
import type { ApiRequest, RequestParam, Route } from './types.ts';

const UA = 'Mozilla/5.0 (test)';

/** A handler whose routes echo the parsed request, throw, reject or reply in other ways. */
function echoServer(options: Parameters<typeof createRequestHandler>[1] = {}) {
  const logs = memoryLog();
  const seen: ApiRequest[] = [];
  const routes: Route[] = [
    {
      path: '/echo',
      handler: (r) => {
        seen.push(r);
        return { json: { method: r.method, path: r.path, ip: r.ip, params: r.params } };
      },
    },
    { path: '/text', handler: () => ({ text: '{"pre":"serialized"}' }) },
    { path: '/status', handler: () => ({ json: { teapot: true }, status: 418 }) },
    {
      path: '/throws',
      handler: () => {
        throw new Error('boom');
      },
    },
    { path: '/rejects', handler: () => Promise.reject(new Error('async boom')) },
    { path: '/bigint', handler: () => ({ json: { n: 1n } }) },
    { path: '/undefined', handler: () => ({ json: undefined }) },
    { path: '/async', handler: async () => ({ json: { later: 1 } }) },
  ];
  const handler = createRequestHandler(routes, { log: logs.log, ...options });
  return { handler, logs, seen };
}

const params = (body: unknown): RequestParam[] => (body as { params: RequestParam[] }).params;

describe('parseParams', () => {
  test('keeps order, repeats and the raw segment; skips empty segments', () => {
    const out: RequestParam[] = [];
    parseParams('b=2&a=1&&a=3&flag&=v&x=&', out);
    assert.deepEqual(out, [
      { name: 'b', value: '2', raw: 'b=2' },
      { name: 'a', value: '1', raw: 'a=1' },
      { name: 'a', value: '3', raw: 'a=3' },
      { name: 'flag', value: '', raw: 'flag' },
      { name: '', value: 'v', raw: '=v' },
      { name: 'x', value: '', raw: 'x=' },
    ]);
  });

  test('decodes percent-escapes and + as space; an = inside a value stays', () => {
    const out: RequestParam[] = [];
    parseParams(
      'receiveAddr=TXyz123abc_memo%201%262&safePwd=p%40ss+w%2Frd%3D1&eq=a=b&tradeParams=[[1,2]]',
      out,
    );
    assert.deepEqual(
      out.map((p) => [p.name, p.value]),
      [
        ['receiveAddr', 'TXyz123abc_memo 1&2'],
        ['safePwd', 'p@ss w/rd=1'],
        ['eq', 'a=b'],
        ['tradeParams', '[[1,2]]'],
      ],
    );
    assert.equal(out[1]?.raw, 'safePwd=p%40ss+w%2Frd%3D1');
  });

  test('malformed percent-encoding never throws: the text is taken raw, undecoded', () => {
    for (const text of ['%', '%Z', '%ZZ', 'a%2', '100%', '%E0%A4%A', '%C3%28', '%FF', 'p%ss+x', '%D8%00']) {
      assert.equal(decodeComponent(text), text, text);
    }
    assert.equal(decodeComponent('%E2%82%AC+1'), '€ 1');
    assert.equal(decodeComponent('plain'), 'plain');
  });
});

describe('request handling', () => {
  test('GET: exact path, query parsed in order, IPv4-mapped address shortened', async () => {
    const { handler } = echoServer();
    const r = await inject(handler, {
      method: 'GET',
      url: '/echo?market=btc_usdt&size=5&x=%ZZ',
      headers: { 'user-agent': UA },
      remoteAddress: '::ffff:10.1.2.3',
    });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.payload)));
    const body = r.json() as { method: string; path: string; ip: string };
    assert.equal(body.method, 'GET');
    assert.equal(body.path, '/echo');
    assert.equal(body.ip, '10.1.2.3');
    assert.deepEqual(params(body), [
      { name: 'market', value: 'btc_usdt', raw: 'market=btc_usdt' },
      { name: 'size', value: '5', raw: 'size=5' },
      { name: 'x', value: '%ZZ', raw: 'x=%ZZ' },
    ]);
  });

  test('POST form body: query parameters first, then the body, raw segments kept', async () => {
    const { handler } = echoServer();
    const r = await inject(handler, {
      method: 'POST',
      url: '/echo?method=order',
      headers: { 'user-agent': UA, 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      payload: 'accesskey=k&price=30000.00&safePwd=p%40ss+w&bad=%E0%A4%A',
    });
    assert.deepEqual(params(r.json()), [
      { name: 'method', value: 'order', raw: 'method=order' },
      { name: 'accesskey', value: 'k', raw: 'accesskey=k' },
      { name: 'price', value: '30000.00', raw: 'price=30000.00' },
      { name: 'safePwd', value: 'p@ss w', raw: 'safePwd=p%40ss+w' },
      { name: 'bad', value: '%E0%A4%A', raw: 'bad=%E0%A4%A' },
    ]);
  });

  test('POST without a content type is read as a form; an empty POST has only the query', async () => {
    const { handler } = echoServer();
    let r = await inject(handler, {
      method: 'POST',
      url: '/echo',
      headers: { 'user-agent': UA },
      payload: 'a=1',
    });
    assert.deepEqual(params(r.json()), [{ name: 'a', value: '1', raw: 'a=1' }]);
    r = await inject(handler, { method: 'POST', url: '/echo?q=1', headers: { 'user-agent': UA } });
    assert.deepEqual(params(r.json()), [{ name: 'q', value: '1', raw: 'q=1' }]);
  });

  test('POST with another content type → 3005', async () => {
    const { handler, seen } = echoServer();
    const r = await inject(handler, {
      method: 'POST',
      url: '/echo',
      headers: { 'user-agent': UA, 'content-type': 'application/json' },
      payload: '{"a":1}',
    });
    assert.equal(r.statusCode, 200);
    const body = r.json() as { code: number; message: string };
    assert.equal(body.code, 3005);
    assert.match(body.message, /application\/x-www-form-urlencoded/);
    assert.equal(seen.length, 0);
  });

  test('a body over the limit → HTTP 413, code 3005, connection closed; at the limit it is read', async () => {
    const { handler, seen } = echoServer({ maxBodyBytes: 1024 });
    const big = `a=${'x'.repeat(1024)}`;
    const r = await inject(handler, {
      method: 'POST',
      url: '/echo',
      headers: { 'user-agent': UA },
      payload: big,
    });
    assert.equal(r.statusCode, 413);
    assert.equal(r.headers['connection'], 'close');
    const body = r.json() as { code: number; message: string };
    assert.equal(body.code, 3005);
    assert.match(body.message, /larger than 1024 bytes/);
    assert.equal(seen.length, 0);
    const fits = await inject(handler, {
      method: 'POST',
      url: '/echo',
      headers: { 'user-agent': UA },
      payload: big.slice(0, 1024),
    });
    assert.equal(fits.statusCode, 200);
    assert.equal(seen.length, 1);
  });

  test('the default body limit is 64 KiB', async () => {
    const { handler } = echoServer();
    const r = await inject(handler, {
      method: 'POST',
      url: '/echo',
      headers: { 'user-agent': UA },
      payload: `a=${'x'.repeat(64 * 1024)}`,
    });
    assert.equal(r.statusCode, 413);
  });

  test('a Content-Type that only starts with the form type → 3005; parameters after ; are fine', async () => {
    const { handler, seen } = echoServer();
    for (const type of [
      'application/x-www-form-urlencodedX',
      'application/x-www-form-urlencoded-json',
      'application/x-www-form-urlencoded,application/json',
      'application/x-www-form',
      '',
    ]) {
      const r = await inject(handler, {
        method: 'POST',
        url: '/echo',
        headers: { 'user-agent': UA, 'content-type': type },
        payload: 'a=1',
      });
      assert.equal(r.statusCode, 200, type);
      assert.equal((r.json() as { code: number }).code, 3005, type);
    }
    assert.equal(seen.length, 0);
    for (const type of [
      'application/x-www-form-urlencoded',
      'Application/X-WWW-Form-URLEncoded',
      'application/x-www-form-urlencoded ; charset=UTF-8',
    ]) {
      const r = await inject(handler, {
        method: 'POST',
        url: '/echo',
        headers: { 'user-agent': UA, 'content-type': type },
        payload: 'a=1',
      });
      assert.deepEqual(params(r.json()), [{ name: 'a', value: '1', raw: 'a=1' }], type);
    }
  });

  test('an unknown /api/<method> → HTTP 200 with code 3005 naming the method, as the real API answered', async () => {
    const { handler } = echoServer();
    for (const method of ['GET', 'POST', 'DELETE']) {
      const r = await inject(handler, {
        method: method as 'GET',
        url: '/api/getLeverAssetsInfo?accesskey=x',
        headers: { 'user-agent': UA },
      });
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(r.json(), {
        code: 3005,
        message: "unknown method 'getLeverAssetsInfo': no endpoint at /api/getLeverAssetsInfo",
      });
    }
  });

  test('unknown path → 404 with a JSON body; another method → 405', async () => {
    const { handler } = echoServer();
    let r = await inject(handler, { method: 'GET', url: '/nope?x=1', headers: { 'user-agent': UA } });
    assert.equal(r.statusCode, 404);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(r.json(), { code: 1001, message: 'no endpoint at /nope' });
    r = await inject(handler, { method: 'GET', url: '/echo/', headers: { 'user-agent': UA } });
    assert.equal(r.statusCode, 404, 'paths are exact');
    r = await inject(handler, { method: 'DELETE', url: '/echo', headers: { 'user-agent': UA } });
    assert.equal(r.statusCode, 405);
    assert.equal(r.headers['allow'], 'GET, POST');
    assert.equal((r.json() as { code: number }).code, 1001);
  });

  test('replies: {text} as-is, {json} stringified, status kept, async handlers awaited', async () => {
    const { handler } = echoServer();
    const get = (url: string) => inject(handler, { method: 'GET', url, headers: { 'user-agent': UA } });
    assert.equal((await get('/text')).payload, '{"pre":"serialized"}');
    const status = await get('/status');
    assert.equal(status.statusCode, 418);
    assert.equal(status.payload, '{"teapot":true}');
    assert.equal((await get('/async')).payload, '{"later":1}');
  });

  test('a handler that throws, rejects or returns unserializable JSON → logged, HTTP 200, code 1002', async () => {
    const { handler, logs } = echoServer();
    for (const path of ['/throws', '/rejects', '/bigint', '/undefined']) {
      const r = await inject(handler, { method: 'GET', url: path, headers: { 'user-agent': UA } });
      assert.equal(r.statusCode, 200, path);
      assert.deepEqual(r.json(), { code: 1002, message: 'internal error' }, path);
    }
    const logged = logs.entries();
    assert.equal(logged.length, 4);
    assert.deepEqual(
      logged.map((e) => [e['level'], e['path'], (e['err'] as { message: string }).message]),
      [
        ['error', '/throws', 'boom'],
        ['error', '/rejects', 'async boom'],
        ['error', '/bigint', 'Do not know how to serialize a BigInt'],
        ['error', '/undefined', 'the reply has no body, text or JSON value'],
      ],
    );
    assert.match(logged[0]?.['msg'] as string, /GET \/throws failed: answered 1002/);
  });

  test('a request slower than slowRequestMs is logged at warn; faster ones are not', async () => {
    let clock = 1_000;
    const logs = memoryLog();
    const handler = createRequestHandler(
      [
        { path: '/fast', handler: () => ({ json: { code: 1000 } }) },
        {
          path: '/slow',
          handler: () => {
            clock += 250;
            return { json: { code: 1000 } };
          },
        },
      ],
      { log: logs.log, slowRequestMs: 200, now: () => clock },
    );
    for (const url of ['/fast', '/slow?x=1'])
      await inject(handler, { method: 'GET', url, headers: { 'user-agent': UA } });
    const [line, ...rest] = logs.entries();
    assert.deepEqual(rest, []);
    assert.equal(line?.['level'], 'warn');
    assert.equal(line?.['msg'], 'slow request: GET /slow took 250 ms');
    assert.equal(line?.['ms'], 250);
    assert.equal(line?.['code'], 1000);
    assert.equal(line?.['params'], undefined, 'parameters are not in a slow-request line');
  });

  test('a refused request is access-logged with its reason; a quiet path at debug', async () => {
    const logs = memoryLog();
    const handler = createRequestHandler(
      [
        {
          path: '/admin/halt',
          handler: () => ({ json: { code: 3005, message: "unknown market 'x': the markets are a_b" } }),
        },
        { path: '/admin/ok', handler: () => ({ json: { code: 1000, message: 'success' } }) },
        { path: '/admin/instance', handler: () => ({ json: { code: 1000, instance: 'i' } }) },
      ],
      { log: logs.log, accessLog: true, quietPaths: new Set(['/admin/instance']) },
    );
    for (const url of ['/admin/halt', '/admin/ok', '/admin/instance'])
      await inject(handler, { method: 'POST', url, headers: { 'user-agent': UA } });
    const lines = logs.entries();
    assert.deepEqual(
      lines.map((l) => [l['level'], l['msg'], l['reason']]),
      [
        [
          'info',
          "POST /admin/halt refused (3005): unknown market 'x': the markets are a_b",
          "unknown market 'x': the markets are a_b",
        ],
        ['info', 'POST /admin/ok', undefined],
        ['debug', 'POST /admin/instance', undefined],
      ],
    );
  });

  test('the access log has every routed request at info, secret parameters hidden', async () => {
    const logs = memoryLog();
    const handler = createRequestHandler([{ path: '/admin/x', handler: () => ({ json: { code: 3005 } }) }], {
      log: logs.log,
      accessLog: true,
    });
    await inject(handler, {
      method: 'POST',
      url: '/admin/x',
      headers: { 'user-agent': UA, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'user=alice&password=hunter22&code=492039&amount=5',
    });
    await inject(handler, { method: 'GET', url: '/nowhere', headers: { 'user-agent': UA } });
    const lines = logs.entries();
    assert.equal(lines.length, 1, 'unrouted requests are not access-logged');
    assert.equal(lines[0]?.['level'], 'info');
    assert.equal(lines[0]?.['code'], 3005);
    assert.deepEqual(lines[0]?.['params'], { user: 'alice', password: '***', code: '***', amount: '5' });
    assert.doesNotMatch(JSON.stringify(lines), /hunter22|492039/);
  });

  test('duplicate paths are refused at start-up', () => {
    const route: Route = { path: '/x', handler: () => ({ json: 1 }) };
    assert.throws(() => createRequestHandler([route, route]), /duplicate route \/x/);
  });
});

describe('User-Agent rule', () => {
  test('a missing or empty User-Agent → HTTP 200, code 3005, saying what to send', async () => {
    const { handler, seen } = echoServer();
    for (const headers of [{ 'user-agent': undefined }, { 'user-agent': '' }]) {
      const r = await inject(handler, { method: 'GET', url: '/echo', headers });
      assert.equal(r.statusCode, 200);
      const body = r.json() as { code: number; message: string };
      assert.equal(body.code, 3005);
      assert.match(body.message, /missing User-Agent header.*browser-style User-Agent/);
    }
    assert.equal(seen.length, 0);
  });

  test('any agent passes by default; strictUserAgent requires a Mozilla/ one', async () => {
    const lenient = echoServer();
    const strict = echoServer({ strictUserAgent: true });
    const call = (h: typeof lenient, ua: string) =>
      inject(h.handler, { method: 'GET', url: '/echo', headers: { 'user-agent': ua } }).then(
        (r) => r.json() as { code?: number; message?: string },
      );
    assert.equal((await call(lenient, 'node-fetch/1.0')).code, undefined);
    const refused = await call(strict, 'node-fetch/1.0');
    assert.equal(refused.code, 3005);
    assert.match(refused.message ?? '', /User-Agent 'node-fetch\/1.0' refused.*'Mozilla\/'/);
    assert.equal((await call(strict, 'Mozilla/5.0 (Windows NT 10.0)')).code, undefined);
  });
});

/** Sends raw bytes on a fresh connection and resolves with everything the server wrote back. */
async function rawExchange(port: number, bytes: string, localAddress = '127.0.0.1'): Promise<string> {
  const { connect } = await import('node:net');
  return new Promise<string>((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => socket.write(bytes));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (text += c));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

describe('startHttpServer (real sockets)', () => {
  test('an HTTP/1.1 request without Host → JSON 400, code 3005; HTTP/1.0 without Host is served', async () => {
    const { handler } = echoServer();
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, handler });
    try {
      const reply = await rawExchange(server.port, `GET /echo HTTP/1.1\r\nUser-Agent: ${UA}\r\n\r\n`);
      assert.match(reply, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(reply, /Content-Type: application\/json; charset=utf-8/);
      assert.match(reply, /\{"code":3005,"message":"missing Host header: [^"]*"\}$/);
      const old = await rawExchange(server.port, `GET /echo?a=1 HTTP/1.0\r\nUser-Agent: ${UA}\r\n\r\n`);
      assert.match(old, /^HTTP\/1\.1 200 OK\r\n/);
    } finally {
      await server.close();
    }
  });

  test('a request whose headers do not arrive in time → JSON 408 and the connection closed', async () => {
    const { handler } = echoServer();
    const server = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      handler,
      limits: { headersTimeoutMs: 200, requestTimeoutMs: 400 },
    });
    try {
      // Half a request, then silence (a slowloris client); and a connection that sends nothing.
      const [half, silent] = await Promise.all([
        rawExchange(server.port, `GET /echo HTTP/1.1\r\nHost: x\r\nUser-Agent: ${UA}\r\n`),
        rawExchange(server.port, ''),
      ]);
      for (const reply of [half, silent]) {
        assert.match(reply, /^HTTP\/1\.1 408 Request Timeout\r\n/);
        assert.match(reply, /\{"code":1001,"message":"request not received in time [^"]*"\}$/);
      }
    } finally {
      await server.close();
    }
  });

  test('keep-alive: several requests on one connection; a chunked body over the limit → 413', async () => {
    const { handler } = echoServer({ maxBodyBytes: 1000 });
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, handler });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<unknown>();
      const call = (method: string, path: string, body?: string, chunks = 1) =>
        new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((resolve, reject) => {
          const req = httpRequest(
            { host: '127.0.0.1', port: server.port, method, path, agent, headers: { 'user-agent': UA } },
            (res) => {
              sockets.add(res.socket);
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (text += c));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
            },
          );
          req.on('error', reject);
          if (body !== undefined) {
            const size = Math.ceil(body.length / chunks);
            for (let i = 0; i < body.length; i += size) req.write(body.slice(i, i + size));
          }
          req.end();
        });
      const a = await call('GET', '/echo?n=1');
      const b = await call('POST', '/echo', 'n=2');
      assert.equal(a.status, 200);
      assert.equal(a.headers['connection'], 'keep-alive');
      assert.deepEqual(
        params(JSON.parse(b.body)).map((p) => p.value),
        ['2'],
      );
      assert.equal(sockets.size, 1, 'both requests used one connection');
      const tooBig = await call('POST', '/echo', `a=${'x'.repeat(5000)}`, 10);
      assert.equal(tooBig.status, 413);
      assert.equal((JSON.parse(tooBig.body) as { code: number }).code, 3005);
    } finally {
      agent.destroy();
      await server.close();
    }
  });

  test('a malformed request gets a JSON 400, not HTML', async () => {
    const { handler } = echoServer();
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, handler });
    try {
      const { connect } = await import('node:net');
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect(server.port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (c: string) => (text += c));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(reply, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(reply, /Content-Type: application\/json; charset=utf-8/);
      assert.match(reply, /\{"code":3005,"message":"malformed HTTP request"\}$/);
    } finally {
      await server.close();
    }
  });

  test('headers over the limit get a JSON 431 naming the limit', async () => {
    const { handler } = echoServer();
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, handler });
    try {
      const { connect } = await import('node:net');
      const { maxHeaderSize } = await import('node:http');
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect(server.port, '127.0.0.1', () =>
          socket.write(`GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(maxHeaderSize)}\r\n\r\n`),
        );
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (c: string) => (text += c));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      assert.match(reply, /^HTTP\/1\.1 431 /);
      assert.ok(
        reply.endsWith(`{"code":3005,"message":"request headers larger than ${maxHeaderSize} bytes"}`),
        reply,
      );
    } finally {
      await server.close();
    }
  });
});
