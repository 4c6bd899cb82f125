/**
 * @module hmac-md5 — HMAC-MD5 (RFC 2104 over RFC 1321) for one key, verifying many messages.
 *
 * Why not `crypto.createHmac`: every signed request is checked with its key's HMAC, and a Node Hmac
 * object costs its creation, the key's two pad blocks hashed again, and a hex string to compare.
 * Here the two pad blocks are hashed once per key (the inner and outer states are kept); a
 * message costs only its own blocks plus one outer block, and the digest is compared as four
 * words against the parsed signature, in time independent of where they differ. MD5 is what the
 * ZB signature prescribes; this is its plain definition, checked against `node:crypto` over random
 * keys and messages in the test.
 */

/** Per-step left rotations (RFC 1321 §3.4), four per round. */
const SHIFTS = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
/** The sine table: floor(abs(sin(i + 1)) × 2^32). */
const K = Int32Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0);
/** The message-word index of each step. */
const WORD = Uint8Array.from({ length: 64 }, (_, i) =>
  i < 16 ? i : i < 32 ? (5 * i + 1) % 16 : i < 48 ? (3 * i + 5) % 16 : (7 * i) % 16,
);
const INITIAL = Int32Array.of(0x67452301, 0xefcdab89 | 0, 0x98badcfe | 0, 0x10325476);
const BLOCK = 64;

/** Updates `state` (4 words) with the 64-byte block of `bytes` at `offset`. */
function compress(state: Int32Array, bytes: Uint8Array, offset: number, x: Int32Array): void {
  for (let i = 0; i < 16; i++) {
    const o = offset + i * 4;
    x[i] =
      (bytes[o] as number) |
      ((bytes[o + 1] as number) << 8) |
      ((bytes[o + 2] as number) << 16) |
      ((bytes[o + 3] as number) << 24);
  }
  let a = state[0] as number;
  let b = state[1] as number;
  let c = state[2] as number;
  let d = state[3] as number;
  // The four rounds differ only in their mixing function; one loop each keeps the steps branch-free.
  for (let i = 0; i < 16; i++) {
    const sum = (a + ((b & c) | (~b & d)) + (K[i] as number) + (x[WORD[i] as number] as number)) | 0;
    const s = SHIFTS[i & 3] as number;
    a = d;
    d = c;
    c = b;
    b = (b + ((sum << s) | (sum >>> (32 - s)))) | 0;
  }
  for (let i = 16; i < 32; i++) {
    const sum = (a + ((d & b) | (~d & c)) + (K[i] as number) + (x[WORD[i] as number] as number)) | 0;
    const s = SHIFTS[4 + (i & 3)] as number;
    a = d;
    d = c;
    c = b;
    b = (b + ((sum << s) | (sum >>> (32 - s)))) | 0;
  }
  for (let i = 32; i < 48; i++) {
    const sum = (a + (b ^ c ^ d) + (K[i] as number) + (x[WORD[i] as number] as number)) | 0;
    const s = SHIFTS[8 + (i & 3)] as number;
    a = d;
    d = c;
    c = b;
    b = (b + ((sum << s) | (sum >>> (32 - s)))) | 0;
  }
  for (let i = 48; i < 64; i++) {
    const sum = (a + (c ^ (b | ~d)) + (K[i] as number) + (x[WORD[i] as number] as number)) | 0;
    const s = SHIFTS[12 + (i & 3)] as number;
    a = d;
    d = c;
    c = b;
    b = (b + ((sum << s) | (sum >>> (32 - s)))) | 0;
  }
  state[0] = ((state[0] as number) + a) | 0;
  state[1] = ((state[1] as number) + b) | 0;
  state[2] = ((state[2] as number) + c) | 0;
  state[3] = ((state[3] as number) + d) | 0;
}

/**
 * Continues the hash `from` (which has absorbed `absorbed` bytes, a multiple of 64) over
 * `bytes[0, length)` and its padding, leaving the digest's four words in `out`. `bytes` must have
 * room for the padding (length + 72 bytes).
 */
function finish(
  from: Int32Array,
  absorbed: number,
  bytes: Uint8Array,
  length: number,
  out: Int32Array,
  x: Int32Array,
): void {
  out.set(from);
  const padded = (((length + 8) >> 6) + 1) * BLOCK;
  bytes[length] = 0x80;
  bytes.fill(0, length + 1, padded - 8);
  const bits = (absorbed + length) * 8;
  const low = bits >>> 0;
  const high = Math.floor(bits / 2 ** 32);
  for (let i = 0; i < 4; i++) {
    bytes[padded - 8 + i] = (low >>> (8 * i)) & 0xff;
    bytes[padded - 4 + i] = (high >>> (8 * i)) & 0xff;
  }
  for (let offset = 0; offset < padded; offset += BLOCK) compress(out, bytes, offset, x);
}

/** Writes a digest's four words into `out[0, 16)` as MD5's little-endian bytes. */
function bytesOf(words: Int32Array, out: Uint8Array): void {
  for (let i = 0; i < 16; i++) out[i] = ((words[i >> 2] as number) >>> (8 * (i & 3))) & 0xff;
}

/** The 32-hex-digit text of a digest's four words (little-endian bytes, as MD5 writes them). */
function hexOf(words: Int32Array): string {
  let text = '';
  for (let i = 0; i < 4; i++) {
    const w = words[i] as number;
    for (let j = 0; j < 4; j++) text += ((w >>> (8 * j)) & 0xff).toString(16).padStart(2, '0');
  }
  return text;
}

/** The value of one hex digit's character code, or -1 (either case accepted). */
function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/**
 * Scratch shared by every key (module state is per thread, and a hash runs to its end without
 * yielding): a message's bytes and padding (grown as needed), a block's words, a digest, the
 * outer block. A key itself holds only its two states, 32 bytes.
 */
let scratchBytes = new Uint8Array(1024);
const scratchWords = new Int32Array(16);
const scratchDigest = new Int32Array(4);
const outerBlock = new Uint8Array(BLOCK + 8);
const encoder = new TextEncoder();

/** A key for HMAC-MD5: hashes messages and checks hex signatures. */
export class HmacMd5Key {
  readonly #inner = new Int32Array(4);
  readonly #outer = new Int32Array(4);

  /** `key`: the HMAC key's bytes (a key longer than a block is hashed first, as RFC 2104 says). */
  constructor(key: Uint8Array) {
    let k = key;
    if (k.length > BLOCK) {
      const bytes = new Uint8Array(k.length + 72);
      bytes.set(k);
      const digest = new Int32Array(4);
      finish(INITIAL, 0, bytes, k.length, digest, scratchWords);
      k = new Uint8Array(16);
      bytesOf(digest, k);
    }
    const pad = new Uint8Array(BLOCK);
    for (const [state, byte] of [
      [this.#inner, 0x36],
      [this.#outer, 0x5c],
    ] as const) {
      pad.fill(byte);
      for (let i = 0; i < k.length; i++) pad[i] = (k[i] as number) ^ byte;
      state.set(INITIAL);
      compress(state, pad, 0, scratchWords);
    }
  }

  /** Leaves HMAC(message) in the digest scratch. */
  #hmac(message: string): Int32Array {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit; 72 more for the padding.
    const room = message.length * 3 + 72;
    if (scratchBytes.length < room) scratchBytes = new Uint8Array(room * 2);
    const { written } = encoder.encodeInto(message, scratchBytes);
    finish(this.#inner, BLOCK, scratchBytes, written, scratchDigest, scratchWords);
    bytesOf(scratchDigest, outerBlock);
    finish(this.#outer, BLOCK, outerBlock, 16, scratchDigest, scratchWords);
    return scratchDigest;
  }

  /** hex(HMAC-MD5(key, utf8(message))): 32 lowercase hex digits. */
  hex(message: string): string {
    return hexOf(this.#hmac(message));
  }

  /**
   * Whether `signHex` (32 hex digits, either case) is HMAC-MD5(key, utf8(message)). The time taken
   * depends only on the lengths, not on where the signature differs.
   */
  verify(message: string, signHex: string): boolean {
    const digest = this.#hmac(message);
    if (signHex.length !== 32) return false;
    let diff = 0;
    for (let i = 0; i < 16; i++) {
      const high = hexDigit(signHex.charCodeAt(2 * i));
      const low = hexDigit(signHex.charCodeAt(2 * i + 1));
      const byte = ((digest[i >> 2] as number) >>> (8 * (i & 3))) & 0xff;
      diff |= (high | low) < 0 ? 0x100 : ((high << 4) | low) ^ byte;
    }
    return diff === 0;
  }
}
