/**
 * @module types — the contract between the HTTP server and its routes: a parsed request in, a
 * reply out. Routes never touch node:http, so they can be tested without sockets.
 */
import type { Command } from '../../domain/commands.ts';
import type { ApplyResult } from '../../engine/engine.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import type { HistoryStore } from '../../store/history-store.ts';

/** One query or form parameter, in the order received. */
export interface RequestParam {
  /** Decoded name. */
  readonly name: string;
  /** Decoded value (percent-decoding; `+` as space for form bodies and query strings). */
  readonly value: string;
  /** The `name=value` segment exactly as it arrived, undecoded (for raw-form signatures). */
  readonly raw: string;
}

export interface ApiRequest {
  readonly method: 'GET' | 'POST';
  /** Path without the query string, e.g. `/api/order` or `/data/v1/ticker`. */
  readonly path: string;
  /** Parameters from the query string, then from a form body (POST). */
  readonly params: readonly RequestParam[];
  /** Remote address as seen by the server (IPv4-mapped IPv6 prefixes removed). */
  readonly ip: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Arrival time in ms (wall clock). */
  readonly receivedAt: number;
}

/**
 * A reply: a JSON value, a pre-serialized JSON text, or pre-encoded UTF-8 JSON bytes (cached market
 * data: the bytes go to the socket with no per-request encoding or length count). HTTP status 200
 * unless set.
 */
export type ApiReply =
  | { readonly json: unknown; readonly status?: number }
  | { readonly text: string; readonly status?: number }
  | { readonly body: Uint8Array; readonly status?: number };

export type RouteHandler = (request: ApiRequest) => ApiReply | Promise<ApiReply>;

export interface Route {
  /** Exact path, e.g. `/data/v1/depth`. */
  readonly path: string;
  readonly handler: RouteHandler;
}

/** What the API needs from the rest of the venue. */
export interface VenuePort {
  /** Live state for reads. Everything in it is durable. */
  readonly engine: VenueState;
  /** Sequences a command; resolves after it is durable and applied (or BUSY at once). */
  submit(command: Command): Promise<ApplyResult>;
  /** Order history, trades, klines, bills, deposit and withdrawal records. */
  readonly history: HistoryStore;
  /** Wall clock, ms. */
  now(): number;
}

/** A parameter's text for the readers (edge/readers.ts): `undefined` when absent or empty (clients send `name=` for "not given"). */
export function paramText(request: ApiRequest, name: string): string | undefined {
  for (const p of request.params) if (p.name === name) return p.value === '' ? undefined : p.value;
  return undefined;
}

/** First value of a parameter by name, or undefined. */
export function param(request: ApiRequest, name: string): string | undefined {
  for (const p of request.params) if (p.name === name) return p.value;
  return undefined;
}
