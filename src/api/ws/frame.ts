/**
 * @module frame — WebSocket text frames (RFC 6455 §5.2) built once per payload, so that a message
 * sent to a thousand sockets is encoded and framed once and the same bytes are written to each.
 * Frames from a server are never masked, so one frame serves every receiver.
 */

/** FIN set, opcode 1 (text): a whole text message in one frame. */
const FIN_TEXT = 0x81;

/** One unfragmented, unmasked text frame carrying `payload` as UTF-8. */
export function textFrame(payload: string): Buffer {
  const length = Buffer.byteLength(payload);
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = FIN_TEXT;
  if (length < 126) {
    frame[1] = length;
  } else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  frame.write(payload, header, 'utf8');
  return frame;
}
