/**
 * @module command-codec — sequenced commands ⇄ journal payload bytes.
 *
 * The two commands that make up nearly all of a busy journal, PlaceOrder and CancelOrder, are
 * written in a compact binary form (a third of the size of their JSON, and decoded without a
 * parser); every other command, and any place or cancel whose fields fall outside that form, is
 * UTF-8 JSON, one object. A payload's first byte tells them apart: JSON starts with `{` (0x7B),
 * a binary command with its tag (below). Either way decoding gives back exactly the command that
 * was encoded, which replay depends on. The layouts are in docs/journal-format.md.
 */
import type {
  AcctType,
  CancelOrder,
  OrderKind,
  PlaceOrder,
  SequencedCommand,
  Side,
} from '../domain/commands.ts';

const TAG_PLACE_ORDER = 0x01;
const TAG_CANCEL_ORDER = 0x02;
const JSON_OPEN_BRACE = 0x7b;

/** The kinds of order in their binary order: the byte is the index. */
const KINDS: readonly OrderKind[] = ['limit', 'postOnly', 'ioc'];
/** The longest market name or client order id the binary form carries (a one-byte length). */
const MAX_TEXT_BYTES = 255;

/** In the acctType byte: `express` true or false (neither bit: absent, as before issue 14). */
const EXPRESS_TRUE = 0x10;
const EXPRESS_FALSE = 0x20;
const ACCT_TYPE_MASK = 0x0f;

/** tag, side, kind, acctType (and express), then seq, time, userId, price, amount as float64 (exact below 2^53). */
const PLACE_FIXED_BYTES = 4 + 5 * 8;
/** tag, then seq, time, userId, orderId as float64. */
const CANCEL_FIXED_BYTES = 1 + 4 * 8;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeCommand(cmd: SequencedCommand): Uint8Array {
  if (cmd.type === 'PlaceOrder' && fitsBinaryPlace(cmd)) return encodePlace(cmd);
  if (cmd.type === 'CancelOrder' && fitsBinaryCancel(cmd)) return encodeCancel(cmd);
  return encoder.encode(JSON.stringify(cmd));
}

/** Decodes a payload and checks that it is the command for `seq`. Throws on a mismatch. */
export function decodeCommand(seq: number, payload: Uint8Array): SequencedCommand {
  const tag = payload[0];
  let cmd: SequencedCommand | null;
  if (tag === TAG_PLACE_ORDER) cmd = decodePlace(payload);
  else if (tag === TAG_CANCEL_ORDER) cmd = decodeCancel(payload);
  else if (tag === JSON_OPEN_BRACE) cmd = JSON.parse(decoder.decode(payload)) as SequencedCommand | null;
  else cmd = null;
  if (cmd === null || typeof cmd !== 'object' || cmd.seq !== seq || typeof cmd.type !== 'string') {
    throw new Error(`journal record ${seq} does not hold command ${seq}`);
  }
  return cmd;
}

// ───────────────────────────── binary forms ─────────────────────────────

type Stamped<T> = T & { readonly seq: number; readonly time: number };

/** Whether `value` survives a float64 and back unchanged (any number but NaN, which JSON also loses). */
const isExactNumber = (value: unknown): value is number => typeof value === 'number' && value === value;

/** A short text: ASCII only (so its length is its byte count) and at most 255 bytes. */
const isShortAscii = (value: unknown): value is string =>
  typeof value === 'string' && value.length <= MAX_TEXT_BYTES && /^[\x20-\x7e]*$/.test(value);

/** Exactly the fields of the type (a command with anything more, or other values, stays JSON). */
const hasOnlyKeys = (cmd: object, count: number): boolean => Object.keys(cmd).length === count;

function fitsBinaryPlace(cmd: Stamped<PlaceOrder>): boolean {
  return (
    hasOnlyKeys(cmd, cmd.express === undefined ? 11 : 12) &&
    (cmd.express === undefined || typeof cmd.express === 'boolean') &&
    isExactNumber(cmd.seq) &&
    isExactNumber(cmd.time) &&
    isExactNumber(cmd.userId) &&
    isExactNumber(cmd.price) &&
    isExactNumber(cmd.amount) &&
    (cmd.side === 0 || cmd.side === 1) &&
    KINDS.includes(cmd.kind) &&
    (cmd.acctType === 0 || cmd.acctType === 1 || cmd.acctType === 2) &&
    isShortAscii(cmd.market) &&
    isShortAscii(cmd.clientOrderId)
  );
}

function fitsBinaryCancel(cmd: Stamped<CancelOrder>): boolean {
  return (
    hasOnlyKeys(cmd, 7) &&
    isExactNumber(cmd.seq) &&
    isExactNumber(cmd.time) &&
    isExactNumber(cmd.userId) &&
    isExactNumber(cmd.orderId) &&
    isShortAscii(cmd.market) &&
    isShortAscii(cmd.clientOrderId)
  );
}

function encodePlace(cmd: Stamped<PlaceOrder>): Uint8Array {
  const bytes = new Uint8Array(PLACE_FIXED_BYTES + 2 + cmd.market.length + cmd.clientOrderId.length);
  const view = new DataView(bytes.buffer);
  bytes[0] = TAG_PLACE_ORDER;
  bytes[1] = cmd.side;
  bytes[2] = KINDS.indexOf(cmd.kind);
  bytes[3] = cmd.acctType | (cmd.express === true ? EXPRESS_TRUE : cmd.express === false ? EXPRESS_FALSE : 0);
  view.setFloat64(4, cmd.seq, true);
  view.setFloat64(12, cmd.time, true);
  view.setFloat64(20, cmd.userId, true);
  view.setFloat64(28, cmd.price, true);
  view.setFloat64(36, cmd.amount, true);
  const at = writeText(bytes, PLACE_FIXED_BYTES, cmd.market);
  writeText(bytes, at, cmd.clientOrderId);
  return bytes;
}

function encodeCancel(cmd: Stamped<CancelOrder>): Uint8Array {
  const bytes = new Uint8Array(CANCEL_FIXED_BYTES + 2 + cmd.market.length + cmd.clientOrderId.length);
  const view = new DataView(bytes.buffer);
  bytes[0] = TAG_CANCEL_ORDER;
  view.setFloat64(1, cmd.seq, true);
  view.setFloat64(9, cmd.time, true);
  view.setFloat64(17, cmd.userId, true);
  view.setFloat64(25, cmd.orderId, true);
  const at = writeText(bytes, CANCEL_FIXED_BYTES, cmd.market);
  writeText(bytes, at, cmd.clientOrderId);
  return bytes;
}

function decodePlace(bytes: Uint8Array): SequencedCommand | null {
  if (bytes.length < PLACE_FIXED_BYTES + 2) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kind = KINDS[bytes[2] as number];
  const acctByte = bytes[3] as number;
  const expressBits = acctByte & (EXPRESS_TRUE | EXPRESS_FALSE);
  if (expressBits === (EXPRESS_TRUE | EXPRESS_FALSE)) return null;
  const market = readText(bytes, PLACE_FIXED_BYTES);
  if (market === undefined) return null;
  const clientOrderId = readText(bytes, market.end);
  if (kind === undefined || clientOrderId === undefined || clientOrderId.end !== bytes.length) return null;
  // The keys in the order JSON would give them, so both forms decode to the same object shape.
  return {
    type: 'PlaceOrder',
    userId: view.getFloat64(20, true),
    market: market.text,
    side: bytes[1] as Side,
    kind,
    price: view.getFloat64(28, true),
    amount: view.getFloat64(36, true),
    acctType: (acctByte & ACCT_TYPE_MASK) as AcctType,
    clientOrderId: clientOrderId.text,
    ...(expressBits === 0 ? {} : { express: expressBits === EXPRESS_TRUE }),
    seq: view.getFloat64(4, true),
    time: view.getFloat64(12, true),
  };
}

function decodeCancel(bytes: Uint8Array): SequencedCommand | null {
  if (bytes.length < CANCEL_FIXED_BYTES + 2) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const market = readText(bytes, CANCEL_FIXED_BYTES);
  if (market === undefined) return null;
  const clientOrderId = readText(bytes, market.end);
  if (clientOrderId === undefined || clientOrderId.end !== bytes.length) return null;
  return {
    type: 'CancelOrder',
    userId: view.getFloat64(17, true),
    market: market.text,
    orderId: view.getFloat64(25, true),
    clientOrderId: clientOrderId.text,
    seq: view.getFloat64(1, true),
    time: view.getFloat64(9, true),
  };
}

/** Writes a one-byte length and the ASCII text at `at`; returns the offset after it. */
function writeText(bytes: Uint8Array, at: number, text: string): number {
  bytes[at] = text.length;
  for (let i = 0; i < text.length; i++) bytes[at + 1 + i] = text.charCodeAt(i);
  return at + 1 + text.length;
}

/** Reads what `writeText` wrote, or `undefined` when it runs past the payload. */
function readText(bytes: Uint8Array, at: number): { text: string; end: number } | undefined {
  const length = bytes[at];
  if (length === undefined || at + 1 + length > bytes.length) return undefined;
  let text = '';
  for (let i = 0; i < length; i++) text += String.fromCharCode(bytes[at + 1 + i] as number);
  return { text, end: at + 1 + length };
}
