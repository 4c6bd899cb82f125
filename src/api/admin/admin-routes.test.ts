import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import type { Command } from '../../domain/commands.ts';
import { Engine } from '../../engine/engine.ts';
import type { HistoryStore } from '../../store/history-store.ts';
import type { ApiReply, ApiRequest, Route, VenuePort } from '../http/types.ts';
import { adminRoutes, parsePermissions } from './admin-routes.ts';

const TOKEN = 'a'.repeat(64);

function setUp(): {
  engine: Engine;
  call: (path: string, form: [string, string][], token?: string) => Promise<ApiReply>;
} {
  const engine = new Engine(DEFAULT_VENUE);
  let seq = 0;
  const venue: VenuePort = {
    engine,
    history: undefined as unknown as HistoryStore,
    now: () => 1_700_000_000_000,
    submit: (command: Command) =>
      Promise.resolve(engine.apply({ ...command, seq: ++seq, time: 1_700_000_000_000 + seq })),
  };
  let keys = 0;
  const routes = new Map<string, Route>(
    adminRoutes({
      venue,
      token: TOKEN,
      instance: 'i'.repeat(32),
      snapshot: () => Promise.resolve('/tmp/snapshot'),
      funds: { chains: () => [], simulator: undefined, syncChains: () => Promise.resolve() },
      keys: {
        issue: () => ({
          accessKey: `key-${String(++keys).padStart(8, '0')}`,
          secretKey: 's',
          sealedSecret: 'sealed',
        }),
      },
    }).map((r) => [r.path, r]),
  );
  const call = async (path: string, form: [string, string][], token = TOKEN): Promise<ApiReply> => {
    const request: ApiRequest = {
      method: 'POST',
      path,
      params: form.map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
      ip: '127.0.0.1',
      headers: { authorization: `Bearer ${token}` },
      receivedAt: 0,
    };
    return (routes.get(path) as Route).handler(request);
  };
  return { engine, call };
}

const body = (reply: ApiReply): Record<string, unknown> =>
  'json' in reply ? (reply.json as Record<string, unknown>) : {};
/** The state without the sequence position, which a refused but journaled command advances. */
const stateOf = (engine: Engine): string => JSON.stringify({ ...engine.snapshot(), lastSeq: 0 });

describe('admin routes', () => {
  test('the happy path: user, deposit applied once per ref, key', async () => {
    const { engine, call } = setUp();
    assert.equal(body(await call('/admin/users/create', [['name', 'alice']])).userId, 1);
    const credit: [string, string][] = [
      ['user', 'Alice'], // names are looked up regardless of case

      ['coin', 'usdt'],
      ['amount', '10.5'],
      ['ref', 'r1'],
    ];
    assert.equal(body(await call('/admin/deposits/credit', credit)).duplicate, false);
    assert.equal(body(await call('/admin/deposits/credit', credit)).duplicate, true);
    assert.deepEqual(engine.balance(1, 'usdt'), { available: 10_500_000, frozen: 0 });
    const key = body(
      await call('/admin/keys/create', [
        ['user', 'alice'],
        ['perms', 'asset,entrust'],
        ['ip', '10.0.0.1'],
      ]),
    );
    assert.equal(key.code, 1000);
    assert.deepEqual(engine.apiKey(key.accessKey as string)?.permissions, {
      asset: true,
      entrust: true,
      money: false,
      lever: false,
    });
    assert.equal(key.replayProtection, false);
    assert.equal(engine.apiKey(key.accessKey as string)?.replayProtection, undefined);
    const strict = body(
      await call('/admin/keys/create', [
        ['user', 'alice'],
        ['perms', 'asset'],
        ['replayProtection', 'true'],
      ]),
    );
    assert.equal(strict.replayProtection, true);
    assert.equal(engine.apiKey(strict.accessKey as string)?.replayProtection, true);
    // subuser: managing sub-accounts (getAccountInfo's subUserPerm), recorded only when granted.
    const manager = body(
      await call('/admin/keys/create', [
        ['user', 'alice'],
        ['perms', 'asset,subuser'],
      ]),
    );
    assert.deepEqual(manager.permissions, ['asset', 'subuser']);
    assert.deepEqual(engine.apiKey(manager.accessKey as string)?.permissions, {
      asset: true,
      entrust: false,
      money: false,
      lever: false,
      subUser: true,
    });
  });

  test('bad or hostile input gets its code and a clear message, and changes nothing', async () => {
    const { engine, call } = setUp();
    await call('/admin/users/create', [['name', 'alice']]);
    const cases: [string, [string, string][], number, RegExp?][] = [
      ['/admin/users/create', [['name', '']], 3005],
      ['/admin/users/create', [['name', 'a b']], 3005],
      ['/admin/users/create', [['name', 'alice']], 3005, /taken/],
      [
        '/admin/users/create',
        [['name', 'ALICE']],
        3005,
        /'alice' exists, and names are unique regardless of case/,
      ],
      [
        '/admin/keys/create',
        [
          ['user', 'nobody'],
          ['perms', 'asset'],
        ],
        3004,
        /nobody/,
      ],
      [
        '/admin/keys/create',
        [
          ['user', 'alice'],
          ['perms', 'asset,root'],
        ],
        3005,
        /perms/,
      ],
      [
        '/admin/keys/create',
        [
          ['user', 'alice'],
          ['perms', 'asset'],
          ['ip', '<script>'],
        ],
        3005,
        /ips/,
      ],
      [
        '/admin/keys/create',
        [
          ['user', 'alice'],
          ['perms', 'asset'],
          ['replayProtection', 'yes'],
        ],
        3005,
        /replayProtection must be true or false/,
      ],
      [
        '/admin/deposits/credit',
        [
          ['user', 'alice'],
          ['coin', 'bchabc'],
          ['amount', '1'],
        ],
        3005,
        /'bch'/,
      ],
      [
        '/admin/deposits/credit',
        [
          ['user', 'alice'],
          ['coin', 'doge'],
          ['amount', '1'],
        ],
        3005,
        /doge/,
      ],
      [
        '/admin/deposits/credit',
        [
          ['user', 'alice'],
          ['coin', 'usdt'],
          ['amount', '1.0000001'],
        ],
        3003,
        /6 decimals/,
      ],
      [
        '/admin/deposits/credit',
        [
          ['user', 'alice'],
          ['coin', 'usdt'],
          ['amount', '-1'],
        ],
        3003,
      ],
      [
        '/admin/deposits/credit',
        [
          ['user', 'alice'],
          ['coin', 'usdt'],
          ['amount', '1e-9'],
        ],
        3003,
      ],
      [
        '/admin/deposits/credit',
        [
          ['user', 'alice'],
          ['coin', 'usdt'],
        ],
        3003,
      ],
      [
        '/admin/deposits/credit',
        [
          ['user', 'alice'],
          ['coin', 'btc'],
          ['amount', '90071992547.40992'],
        ],
        3003,
        /at most 8 decimals, at most 90071992\.54740991 btc/,
      ],
      // The venue may hold at most 2^53 − 1 units of a coin: the second credit would pass it.
      [
        '/admin/deposits/credit',
        [
          ['user', 'alice'],
          ['coin', 'btc'],
          ['amount', '50000000'],
          ['ref', 'big'],
        ],
        1000,
      ],
      [
        '/admin/deposits/credit',
        [
          ['user', 'alice'],
          ['coin', 'btc'],
          ['amount', '50000000'],
          ['ref', 'big2'],
        ],
        3005,
        /range/,
      ],
      [
        '/admin/markets/status',
        [
          ['market', 'btc_usdt'],
          ['status', 'closed'],
        ],
        3005,
      ],
      [
        '/admin/markets/status',
        [
          ['market', 'foo_bar'],
          ['status', 'halted'],
        ],
        3005,
        /foo_bar/,
      ],
    ];
    for (const [path, form, code, message] of cases) {
      const before = stateOf(engine);
      const reply = body(await call(path, form));
      assert.equal(reply.code, code, `${path} ${JSON.stringify(form)}: ${JSON.stringify(reply)}`);
      if (message !== undefined) assert.match(String(reply.message), message);
      if (code !== 1000)
        assert.equal(stateOf(engine), before, `${path} ${JSON.stringify(form)} changed state`);
    }
  });

  test('without the right token nothing is done', async () => {
    const { engine, call } = setUp();
    const before = stateOf(engine);
    for (const token of ['', 'b'.repeat(64), TOKEN.slice(1)]) {
      const reply = await call('/admin/users/create', [['name', 'mallory']], token);
      assert.equal(reply.status, 401);
      assert.equal(body(reply).code, 1003);
    }
    assert.equal(stateOf(engine), before);
    assert.equal(engine.userId('mallory'), undefined);
  });

  test('parsePermissions', () => {
    assert.deepEqual(parsePermissions(''), { asset: false, entrust: false, money: false, lever: false });
    assert.deepEqual(parsePermissions('lever, money'), {
      asset: false,
      entrust: false,
      money: true,
      lever: true,
    });
    assert.equal(parsePermissions('asset,,entrust'), undefined);
  });
});
