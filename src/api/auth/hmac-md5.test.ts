import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { HmacMd5Key } from './hmac-md5.ts';

/** A seeded generator (xorshift32), so that a failure names inputs that can be made again. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const ALPHABET = 'abcXYZ019=&%+-_.~ é€中😀';

describe('HmacMd5Key', () => {
  test('RFC 2104 test vectors', () => {
    assert.equal(new HmacMd5Key(Buffer.alloc(16, 0x0b)).hex('Hi There'), '9294727a3638bb1c13f48ef8158bfc9d');
    assert.equal(
      new HmacMd5Key(Buffer.from('Jefe')).hex('what do ya want for nothing?'),
      '750c783e6ab0b503eaa86e310a5db738',
    );
  });

  test('equals node:crypto for keys of 0–150 bytes and messages across block boundaries', () => {
    const next = random(20261122);
    for (let keyLength = 0; keyLength <= 150; keyLength += 1) {
      const key = Buffer.from(Array.from({ length: keyLength }, () => Math.floor(next() * 256)));
      const hmac = new HmacMd5Key(key);
      for (const length of [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, Math.floor(next() * 2000)]) {
        const message = Array.from(
          { length },
          () => ALPHABET[Math.floor(next() * ALPHABET.length)] as string,
        ).join('');
        const expected = createHmac('md5', key).update(message, 'utf8').digest('hex');
        assert.equal(
          hmac.hex(message),
          expected,
          `key ${key.toString('hex')} message ${JSON.stringify(message)}`,
        );
        assert.ok(hmac.verify(message, expected));
        assert.ok(hmac.verify(message, expected.toUpperCase()));
      }
    }
  });

  test('a message larger than the scratch buffer, then a small one again', () => {
    const key = Buffer.from('733dba65420d5cc841e56874d788f66280a0cf48');
    const hmac = new HmacMd5Key(key);
    for (const message of ['x'.repeat(100_000), '中'.repeat(5_000), 'accesskey=a&method=order']) {
      assert.equal(hmac.hex(message), createHmac('md5', key).update(message, 'utf8').digest('hex'));
    }
  });

  test('verify refuses every other signature text', () => {
    const hmac = new HmacMd5Key(Buffer.from('key'));
    const good = hmac.hex('message');
    const flipped = `${good.slice(0, 31)}${good[31] === '0' ? '1' : '0'}`;
    for (const bad of [
      flipped,
      `${good.slice(0, 31)}`,
      `${good}0`,
      '',
      `${good.slice(0, 30)}zz`,
      `${good.slice(0, 30)}g0`,
      ' '.repeat(32),
      `-${good.slice(1)}`,
    ]) {
      assert.equal(hmac.verify('message', bad), false, bad);
    }
    assert.equal(hmac.verify('message!', good), false);
  });
});
