/**
 * @module command-codec — sequenced commands ⇄ journal payload bytes (UTF-8 JSON, one object).
 * JSON keeps the journal readable with ordinary tools; the journal's framing and checksums
 * guarantee that what is decoded is what was written.
 */
import type { SequencedCommand } from '../domain/commands.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeCommand(cmd: SequencedCommand): Uint8Array {
  return encoder.encode(JSON.stringify(cmd));
}

/** Decodes a payload and checks that it is the command for `seq`. Throws on a mismatch. */
export function decodeCommand(seq: number, payload: Uint8Array): SequencedCommand {
  const cmd = JSON.parse(decoder.decode(payload)) as SequencedCommand;
  if (cmd === null || typeof cmd !== 'object' || cmd.seq !== seq || typeof cmd.type !== 'string') {
    throw new Error(`journal record ${seq} does not hold command ${seq}`);
  }
  return cmd;
}
