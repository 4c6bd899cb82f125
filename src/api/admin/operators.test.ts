/**
 * Named operators with roles and a second factor (issue 31, "The console an operator expects"):
 * TOTP against RFC 6238's own vectors; sessions opened with a token and a code for the roles that
 * move money; each role refused beyond what it may, with nothing changed; every action audited
 * under its operator's name; operators kept in a file that only the owner reads.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import type { Command } from '../../domain/commands.ts';
import { Engine } from '../../engine/engine.ts';
import type { HistoryStore } from '../../store/history-store.ts';
import type { ApiReply, ApiRequest, Route, VenuePort } from '../http/types.ts';
import { adminRoutes, READ_ONLY_PATHS } from './admin-routes.ts';
import { MemoryAuditLog } from './audit-log.ts';
import {
  ADMIN_ONLY_PATHS,
  FileOperatorStore,
  MAX_CODE_FAILURES,
  MemoryOperatorStore,
  type OperatorStore,
} from './operators.ts';
import { base32Decode, base32Encode, hotp, totp, verifyTotp } from './totp.ts';

const TOKEN = 'b'.repeat(64);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function setUp(store: OperatorStore = new MemoryOperatorStore()) {
  const engine = new Engine(DEFAULT_VENUE);
  let seq = 0;
  const venue: VenuePort = {
    engine,
    history: undefined as unknown as HistoryStore,
    now: () => 1_700_000_000_000,
    submit: (command: Command) =>
      Promise.resolve(engine.apply({ ...command, seq: ++seq, time: 1_700_000_000_000 + seq })),
  };
  const audit = new MemoryAuditLog();
  const routeList = adminRoutes({
    venue,
    token: TOKEN,
    operators: store,
    audit,
    instance: 'i'.repeat(32),
    snapshot: () => Promise.resolve('/tmp/snapshot'),
    funds: { chains: () => [], simulator: undefined, syncChains: () => Promise.resolve() },
    keys: { issue: () => ({ accessKey: 'k'.repeat(32), secretKey: 's', sealedSecret: 'sealed' }) },
  });
  const routes = new Map<string, Route>(routeList.map((r) => [r.path, r]));
  const raw = async (path: string, form: [string, string][], token: string): Promise<ApiReply> => {
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
  const call = async (path: string, form: [string, string][] = [], token = TOKEN): Promise<Json> => {
    const reply = await raw(path, form, token);
    return 'json' in reply ? reply.json : {};
  };
  const status = async (path: string, form: [string, string][], token: string): Promise<number> =>
    (await raw(path, form, token)).status ?? 200;
  /** A new operator: its token and TOTP secret as bytes (undefined for a viewer). */
  const add = async (name: string, role: string) => {
    const r = await call('/admin/operators/add', [
      ['name', name],
      ['role', role],
    ]);
    assert.equal(r.code, 1000, JSON.stringify(r));
    return { token: r.token as string, secret: r.totpSecret ? base32Decode(r.totpSecret) : undefined, r };
  };
  const stateOf = (): string => JSON.stringify({ ...engine.snapshot(), lastSeq: 0 });
  return { engine, audit, call, status, add, stateOf, routeList };
}

describe('TOTP (RFC 6238, HMAC-SHA1)', () => {
  test("the RFC's test vectors, and base32 as RFC 4648 writes it", () => {
    const secret = Buffer.from('12345678901234567890');
    for (const [seconds, code] of [
      [59, '94287082'],
      [1111111109, '07081804'],
      [1111111111, '14050471'],
      [1234567890, '89005924'],
      [2000000000, '69279037'],
      [20000000000, '65353130'],
    ] as const) {
      assert.equal(totp(secret, seconds * 1000, 8), code, `T=${seconds}`);
    }
    // RFC 4226's HOTP vectors (counter 0 and 9).
    assert.equal(hotp(secret, 0), '755224');
    assert.equal(hotp(secret, 9), '520489');
    assert.equal(base32Encode(Buffer.from('foobar')), 'MZXW6YTBOI');
    assert.deepEqual(base32Decode('mzxw 6ytb oi=='), Buffer.from('foobar'));
    assert.equal(base32Decode('not base32!'), undefined);
  });

  test('a code is good within one step of now, once, and never an older one', () => {
    const secret = Buffer.from('12345678901234567890');
    const now = 1111111111_000;
    const code = totp(secret, now);
    const step = verifyTotp(secret, code, now);
    assert.equal(typeof step, 'number');
    assert.equal(verifyTotp(secret, code, now + 30_000), step, 'one step later: drift');
    assert.equal(verifyTotp(secret, code, now + 61_000), undefined, 'two steps later: gone');
    assert.equal(verifyTotp(secret, code, now, step), undefined, 'used');
    assert.equal(verifyTotp(secret, '12345', now), undefined);
    assert.equal(verifyTotp(secret, 'abcdef', now), undefined);
  });
});

describe('named operators with roles', () => {
  test('each role may do what it may, is refused beyond it with nothing changed, and is audited by name', async () => {
    const s = setUp();
    assert.equal((await s.call('/admin/users/create', [['name', 'alice']])).code, 1000);
    const vera = await s.add('vera', 'viewer');
    const otto = await s.add('otto', 'operator');
    const ada = await s.add('ada', 'admin');
    assert.equal(vera.secret, undefined, 'a viewer moves no money: no second factor');
    assert.match(otto.r.otpauth, /^otpauth:\/\/totp\/Bourse:otto\?secret=[A-Z2-7]+&issuer=Bourse/);
    assert.ok(ada.secret !== undefined);

    // The viewer signs in with the token alone, reads, and is refused an action.
    const v = await s.call('/admin/session/open', [], vera.token);
    assert.deepEqual([v.code, v.operator, v.role], [1000, 'vera', 'viewer']);
    assert.equal((await s.call('/admin/users/list', [], v.session)).code, 1000);
    const before = s.stateOf();
    const refusedFreeze = await s.call('/admin/users/freeze', [['user', 'alice']], v.session);
    assert.deepEqual(
      [refusedFreeze.code, refusedFreeze.message],
      [1012, 'vera (viewer) may not users/freeze: it needs the operator role'],
    );
    assert.equal(await s.status('/admin/users/freeze', [['user', 'alice']], v.session), 403);
    assert.equal(s.stateOf(), before, 'a refused role changes nothing');

    // The operator needs a code: none, a wrong one, then the right one (taken once).
    const noCode = await s.call('/admin/session/open', [], otto.token);
    assert.deepEqual(
      [noCode.code, noCode.message],
      [1003, 'otto moves money: give the 6-digit code of your authenticator app too'],
    );
    const code = totp(otto.secret as Buffer, Date.now());
    const wrong = code === '000000' ? '000001' : '000000';
    assert.equal((await s.call('/admin/session/open', [['code', wrong]], otto.token)).code, 1003);
    const o = await s.call('/admin/session/open', [['code', code]], otto.token);
    assert.deepEqual([o.code, o.operator, o.role], [1000, 'otto', 'operator']);
    const replay = await s.call('/admin/session/open', [['code', code]], otto.token);
    assert.match(replay.message, /^wrong or used code/);
    assert.equal((await s.call('/admin/users/freeze', [['user', 'alice']], o.session)).code, 1000);
    const fee = [
      ['market', 'btc_usdt'],
      ['takerFee', '0.001'],
    ] as [string, string][];
    const refusedFee = await s.call('/admin/markets/change', fee, o.session);
    assert.deepEqual(
      [refusedFee.code, refusedFee.message],
      [1012, 'otto (operator) may not markets/change: it needs the admin role'],
    );
    assert.equal(s.engine.market('btc_usdt')?.takerFee, 2_000);

    // The admin changes a fee and manages operators; the operator may not.
    const a = await s.call(
      '/admin/session/open',
      [['code', totp(ada.secret as Buffer, Date.now())]],
      ada.token,
    );
    assert.equal((await s.call('/admin/markets/change', fee, a.session)).code, 1000);
    assert.equal(s.engine.market('btc_usdt')?.takerFee, 1_000);
    assert.equal((await s.call('/admin/operators/list', [], o.session)).code, 1012);
    const list = await s.call('/admin/operators/list', [], a.session);
    assert.deepEqual(
      (list.operators as Json[]).map((x) => [x.name, x.role, x.secondFactor]),
      [
        ['vera', 'viewer', false],
        ['otto', 'operator', true],
        ['ada', 'admin', true],
      ],
    );

    // The audit log names who did each action, and what was refused.
    const entries = s.audit.list(50, 0).entries.map((e) => [e.operator, e.action, e.code]);
    assert.deepEqual(entries.slice(0, 4), [
      ['ada', 'markets/change', 1000],
      ['otto', 'markets/change', 1012],
      ['otto', 'users/freeze', 1000],
      ['vera', 'users/freeze', 1012],
    ]);
    assert.deepEqual(entries.at(-1), ['admin.token', 'users/create', 1000]);

    // Removed: its session ends at once; signing out ends one too.
    assert.equal((await s.call('/admin/operators/remove', [['name', 'otto']], a.session)).code, 1000);
    assert.equal(await s.status('/admin/users/list', [], o.session), 401);
    assert.equal((await s.call('/admin/session/close', [], v.session)).closed, true);
    assert.equal(await s.status('/admin/users/list', [], v.session), 401);
  });

  test('bad input is refused with a message: names, roles, an unknown token, a duplicate', async () => {
    const s = setUp();
    for (const [form, message] of [
      [
        [
          ['name', 'Bob'],
          ['role', 'viewer'],
        ],
        /^operator name 'Bob' must be 1 to 32 lowercase/,
      ],
      [
        [
          ['name', 'admin.token'],
          ['role', 'admin'],
        ],
        /^operator name 'admin.token'/,
      ],
      [
        [
          ['name', 'bob'],
          ['role', 'root'],
        ],
        /^role 'root' must be one of viewer, operator, admin$/,
      ],
      [[['name', 'bob']], /^role is required/],
    ] as [[string, string][], RegExp][]) {
      const r = await s.call('/admin/operators/add', form);
      assert.equal(r.code, 3005, JSON.stringify(form));
      assert.match(r.message, message);
    }
    await s.add('bob', 'viewer');
    const again = await s.call('/admin/operators/add', [
      ['name', 'bob'],
      ['role', 'admin'],
    ]);
    assert.match(again.message, /^operator bob exists: give replace=true/);
    const unknown = await s.call('/admin/session/open', [], 'c'.repeat(64));
    assert.equal(unknown.code, 1003);
    assert.equal(await s.status('/admin/users/list', [], 'c'.repeat(64)), 401);
    assert.equal((await s.call('/admin/operators/remove', [['name', 'nobody']])).code, 3005);
  });

  test(`${MAX_CODE_FAILURES} wrong codes in a row lock the operator out, even with the right one`, async () => {
    const s = setUp();
    const otto = await s.add('otto', 'operator');
    const code = totp(otto.secret as Buffer, Date.now());
    const wrong = code === '000000' ? '000001' : '000000';
    for (let i = 0; i < MAX_CODE_FAILURES; i++) {
      assert.equal((await s.call('/admin/session/open', [['code', wrong]], otto.token)).code, 1003);
    }
    const locked = await s.call('/admin/session/open', [['code', code]], otto.token);
    assert.equal(locked.code, 4002);
    assert.match(locked.message, /^too many wrong codes for otto: try again after /);
  });

  test('every admin-only path is a route, and no read-only path needs the admin role by accident', () => {
    const paths = new Set(setUp().routeList.map((r) => r.path));
    for (const p of ADMIN_ONLY_PATHS) assert.ok(paths.has(p), p);
    for (const p of READ_ONLY_PATHS) assert.ok(paths.has(p), p);
  });

  test('kept in operators.json, readable by the owner only, with no token in it; read back on start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-operators-'));
    try {
      const path = join(dir, 'operators.json');
      const s = setUp(new FileOperatorStore(path));
      const otto = await s.add('otto', 'operator');
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.ok(!readFileSync(path, 'utf8').includes(otto.token), 'only the hash of the token');
      // Another start on the same directory knows otto.
      const again = setUp(new FileOperatorStore(path));
      const code = totp(otto.secret as Buffer, Date.now());
      const o = await again.call('/admin/session/open', [['code', code]], otto.token);
      assert.deepEqual([o.code, o.operator], [1000, 'otto']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
