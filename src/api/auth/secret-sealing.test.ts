import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ACCESS_KEY } from '../../domain/commands.ts';
import {
  MASTER_KEY_ENV,
  generateMasterKeyHex,
  loadMasterKey,
  writeMasterKeyFile,
} from '../../config/master-key.ts';
import { createSecretSealer, generateApiCredentials } from './secret-sealing.ts';
import { secretHash } from './signature.ts';

const HASH = secretHash('f0e1d2c3-aaaa-bbbb-cccc-ddddeeeeffff');
const KEY = 'a1b2c3d4-0000-1111-2222-333344445555';

describe('sealing', () => {
  const master = randomBytes(32);
  const sealer = createSecretSealer(master);

  test('round trip; the text holds neither the secret hash nor the key', () => {
    const sealed = sealer.seal(HASH, KEY);
    assert.match(sealed, /^v1\.[0-9a-f]{16}\.[\w-]+\.[\w-]+$/);
    assert.ok(!sealed.includes(HASH));
    assert.ok(!sealed.includes(master.toString('hex')));
    assert.equal(sealer.unseal(sealed, KEY), HASH);
  });

  test('each seal uses a fresh IV', () => {
    assert.notEqual(sealer.seal(HASH, KEY), sealer.seal(HASH, KEY));
  });

  test('another access key, another master key, or any changed character: does not open', () => {
    const sealed = sealer.seal(HASH, KEY);
    assert.equal(sealer.unseal(sealed, 'someone-elses-key'), undefined);
    assert.equal(createSecretSealer(randomBytes(32)).unseal(sealed, KEY), undefined);
    for (let i = 0; i < sealed.length; i++) {
      const c = sealed[i] === 'A' ? 'B' : 'A';
      const changed = sealed.slice(0, i) + c + sealed.slice(i + 1);
      assert.equal(sealer.unseal(changed, KEY), undefined, `position ${i}`);
    }
  });

  test('a text that differs only in the spare bits of a base64url part does not open', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const parts = sealer.seal(HASH, KEY).split('.');
    const withSpareBits = [2, 3].filter((i) => ((parts[i] as string).length * 6) % 8 !== 0);
    assert.ok(withSpareBits.length > 0);
    for (const i of withSpareBits) {
      const part = parts[i] as string;
      const last = alphabet.indexOf(part[part.length - 1] as string);
      const twin = part.slice(0, -1) + alphabet[last ^ 1];
      assert.deepEqual(Buffer.from(twin, 'base64url'), Buffer.from(part, 'base64url'));
      const changed = parts.map((p, j) => (j === i ? twin : p)).join('.');
      assert.equal(sealer.unseal(changed, KEY), undefined, `part ${i}`);
    }
  });

  test('malformed texts do not open and do not throw', () => {
    for (const s of [
      '',
      'v1',
      'v1...',
      'v2.a.b.c',
      'v1.x.y.z',
      `v1.${'0'.repeat(16)}.AAAA.AAAA`,
      'x'.repeat(5000),
    ]) {
      assert.equal(sealer.unseal(s, KEY), undefined);
    }
  });

  test('rotation: a sealer with previous keys opens old seals and seals with the new key', () => {
    const next = randomBytes(32);
    const rotated = createSecretSealer(next, [master]);
    const old = sealer.seal(HASH, KEY);
    assert.equal(rotated.unseal(old, KEY), HASH);
    assert.equal(createSecretSealer(next).unseal(rotated.seal(HASH, KEY), KEY), HASH);
  });

  test('refuses what is not a secret hash, and keys of the wrong size', () => {
    assert.throws(() => sealer.seal('the plain secret', KEY));
    assert.throws(() => createSecretSealer(randomBytes(16)));
  });
});

describe('master key loading', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bourse-mk-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const hex = generateMasterKeyHex();

  test('from the environment', () => {
    assert.deepEqual(loadMasterKey({ env: { [MASTER_KEY_ENV]: hex } }), Buffer.from(hex, 'hex'));
    assert.throws(() => loadMasterKey({ env: { [MASTER_KEY_ENV]: 'abc' } }), /64 hex digits/);
    assert.throws(() => loadMasterKey({ env: {} }), /no master key/);
  });

  test('from a key file, which wins over the environment; refused inside the data dir', () => {
    const file = join(dir, 'master.key');
    writeMasterKeyFile(file);
    assert.throws(() => writeMasterKeyFile(file), /EEXIST/);
    const key = loadMasterKey({ keyFile: file, env: { [MASTER_KEY_ENV]: hex }, dataDir: join(dir, 'data') });
    assert.equal(key.length, 32);
    assert.notDeepEqual(key, Buffer.from(hex, 'hex'));

    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    const inside = join(dataDir, 'master.key');
    writeFileSync(inside, hex, { mode: 0o600 });
    assert.throws(() => loadMasterKey({ keyFile: inside, dataDir }), /inside the data directory/);
    assert.deepEqual(
      loadMasterKey({ keyFile: inside, dataDir, allowKeyInDataDir: true }),
      Buffer.from(hex, 'hex'),
    );
  });

  test('warns about a key file others can read', { skip: process.platform === 'win32' }, () => {
    const file = join(dir, 'open.key');
    writeFileSync(file, hex, { mode: 0o644 });
    const warnings: string[] = [];
    loadMasterKey({ keyFile: file, warn: (m) => warnings.push(m) });
    assert.equal(warnings.length, 1);
  });
});

test('generated credentials: UUID-like access key, random secret, its hash', () => {
  const a = generateApiCredentials();
  const b = generateApiCredentials();
  assert.match(a.accessKey, ACCESS_KEY);
  assert.match(a.accessKey, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.notEqual(a.secret, b.secret);
  assert.notEqual(a.accessKey, b.accessKey);
  assert.equal(a.secretHash, secretHash(a.secret));
});
