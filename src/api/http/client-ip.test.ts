import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inject } from 'light-my-request';
import { trustedProxyProblem } from '../../config/trusted-proxy-entry.ts';
import { TrustedProxies } from './client-ip.ts';
import { createRequestHandler } from './server.ts';

describe('TrustedProxies', () => {
  test('none by default: the socket address, whatever X-Forwarded-For says', () => {
    const none = new TrustedProxies();
    assert.equal(none.any, false);
    assert.equal(none.clientAddress('10.0.0.1', '1.2.3.4'), '10.0.0.1');
    assert.equal(none.clientAddress('::ffff:10.0.0.1', undefined), '10.0.0.1');
  });

  test('a trusted socket: the rightmost hop that is not a trusted proxy', () => {
    const proxies = new TrustedProxies(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
    assert.equal(proxies.clientAddress('10.1.2.3', '203.0.113.9'), '203.0.113.9');
    // The client can write anything on the left; only what the proxies appended is believed.
    assert.equal(proxies.clientAddress('10.1.2.3', '6.6.6.6, 203.0.113.9'), '203.0.113.9');
    assert.equal(proxies.clientAddress('10.1.2.3', '6.6.6.6, 203.0.113.9, 192.168.1.7'), '203.0.113.9');
    assert.equal(
      proxies.clientAddress('::ffff:10.1.2.3', ['6.6.6.6', '203.0.113.9,10.9.9.9']),
      '203.0.113.9',
    );
    assert.equal(proxies.clientAddress('fd00::1', '2001:db8::5'), '2001:db8::5');
    assert.equal(proxies.clientAddress('10.1.2.3', '::ffff:203.0.113.9'), '203.0.113.9');
    // An untrusted socket's header is ignored: that is the spoofing this setting prevents.
    assert.equal(proxies.clientAddress('203.0.113.50', '1.2.3.4'), '203.0.113.50');
    assert.equal(proxies.clientAddress('192.168.1.8', '1.2.3.4'), '192.168.1.8');
  });

  test('no header, only proxies, or a hop that is not an address: the last trusted hop', () => {
    const proxies = new TrustedProxies(['10.0.0.0/8']);
    assert.equal(proxies.clientAddress('10.1.2.3', undefined), '10.1.2.3');
    assert.equal(proxies.clientAddress('10.1.2.3', ''), '10.1.2.3');
    assert.equal(proxies.clientAddress('10.1.2.3', '10.4.4.4, 10.5.5.5'), '10.4.4.4');
    assert.equal(proxies.clientAddress('10.1.2.3', '1.2.3.4, garbage'), '10.1.2.3');
    assert.equal(proxies.clientAddress('10.1.2.3', '1.2.3.4, 10.5.5.5, unknown'), '10.1.2.3');
    assert.equal(proxies.clientAddress('10.1.2.3', '1.2.3.4:5678'), '10.1.2.3');
  });

  test('entries are addresses or CIDR ranges; anything else is refused naming it', () => {
    for (const good of ['10.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '::1', 'fd00::/8', '::/0', '2001:db8::/128']) {
      assert.equal(trustedProxyProblem(good), undefined, good);
    }
    for (const bad of [
      '10.0.0.0/33',
      '10.0.0/8',
      'fd00::/129',
      'localhost',
      '10.0.0.1/',
      '10.0.0.1/-1',
      '',
    ]) {
      assert.notEqual(trustedProxyProblem(bad), undefined, bad);
    }
    assert.throws(() => new TrustedProxies(['10.0.0.0/40']), /trusted proxies: '10\.0\.0\.0\/40'/);
  });
});

describe('the request handler with trusted proxies', () => {
  const handler = (proxies?: TrustedProxies) =>
    createRequestHandler([{ path: '/ip', handler: (r) => ({ json: { ip: r.ip } }) }], {
      ...(proxies === undefined ? {} : { trustedProxies: proxies }),
    });
  const ipOf = async (h: ReturnType<typeof handler>, remoteAddress: string, xff?: string) =>
    (
      (
        await inject(h, {
          method: 'GET',
          url: '/ip',
          remoteAddress,
          headers: { 'user-agent': 'Mozilla/5.0', ...(xff === undefined ? {} : { 'x-forwarded-for': xff }) },
        })
      ).json() as { ip: string }
    ).ip;

  test('ApiRequest.ip is the client behind a trusted proxy, and the socket otherwise', async () => {
    const trusting = handler(new TrustedProxies(['127.0.0.1']));
    assert.equal(await ipOf(trusting, '127.0.0.1', '198.51.100.4'), '198.51.100.4');
    assert.equal(await ipOf(trusting, '198.51.100.9', '198.51.100.4'), '198.51.100.9');
    const plain = handler();
    assert.equal(await ipOf(plain, '127.0.0.1', '198.51.100.4'), '127.0.0.1');
  });
});

describe('signed routes behind a trusted proxy', () => {
  test('an IP-bound key and the per-IP limit see the client, not the proxy', async () => {
    const { SignedApiHarness } = await import('../../../test/fixtures/signed-venue.ts');
    const { signedRoutes } = await import('./signed/index.ts');
    const { MemoryRateLimiter } = await import('../auth/rate-limit.ts');
    const h = new SignedApiHarness();
    const userId = await h.venue.fund('alice', 'usdt', '10');
    const creds = await h.key(userId, undefined, ['198.51.100.4']);
    const routes = signedRoutes({
      venue: h.venue,
      sealer: h.sealer,
      rateLimiter: new MemoryRateLimiter({ clock: () => h.venue.time, ipRequestsPerMinute: 3 }),
    });
    const proxied = createRequestHandler(routes, {
      trustedProxies: new TrustedProxies(['10.0.0.0/8']),
      now: () => h.venue.time,
    });
    const call = async (remoteAddress: string, xff: string): Promise<number> => {
      const r = h.request('getAccountInfo', creds);
      const reply = await inject(proxied, {
        method: 'GET',
        url: `/api/getAccountInfo?${r.params.map((p) => p.raw).join('&')}`,
        remoteAddress,
        headers: { 'user-agent': 'Mozilla/5.0', 'x-forwarded-for': xff },
      });
      const body = reply.json() as { code?: number };
      return body.code ?? 1000;
    };
    assert.equal(await call('10.0.0.2', '198.51.100.4'), 1000, 'the bound client through the proxy');
    assert.equal(await call('10.0.0.2', '198.51.100.5'), 3006, 'another client through the proxy');
    assert.equal(await call('198.51.100.4', '198.51.100.4'), 1000, 'the client itself');
    // A spoofed header from an untrusted peer counts for nothing.
    assert.equal(await call('203.0.113.7', '198.51.100.4'), 3006);
    // Three requests a minute per client address: the fourth from 198.51.100.4 is refused, while
    // another client behind the same proxy is not.
    assert.equal(await call('10.0.0.3', '198.51.100.4'), 1000);
    assert.equal(await call('10.0.0.2', '198.51.100.4'), 4002);
    assert.equal(await call('10.0.0.3', '198.51.100.5'), 3006);
  });
});
