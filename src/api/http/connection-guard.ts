/**
 * @module connection-guard — bounds what connections can hold on a listener: how many in total,
 * how many from one address, and how long a slow or idle one may stay (docs/trading-api.md,
 * "What the public listener refuses").
 */
import { isIP } from 'node:net';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { plainAddress, type TrustedProxies } from './client-ip.ts';

export interface ConnectionLimits {
  /** Open connections in total (HTTP and WebSocket); beyond it new ones are closed at once. */
  readonly maxConnections: number;
  /**
   * Open connections from one address (an IPv6 address counts by its /64, which one host
   * usually holds whole); beyond it new ones are closed at once. Trusted proxies are exempt
   * (they carry many clients), bounded only by the total.
   */
  readonly maxConnectionsPerIp: number;
  /** Time to receive a request's headers, from its first byte or the connection's start (ms). */
  readonly headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body (ms). */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept between requests (ms). */
  readonly keepAliveTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  maxConnections: 10_000,
  maxConnectionsPerIp: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 20_000,
  keepAliveTimeoutMs: 5_000,
});

/** How often node checks the headers and request timeouts (its default, 30 s, would let them run 30 s late). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** The node:http server options that carry the limits (they must be given at creation). */
export function serverTimeouts(limits: ConnectionLimits): {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionsCheckingInterval: number;
} {
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new RangeError('headersTimeoutMs must not exceed requestTimeoutMs');
  }
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, limits.headersTimeoutMs),
  };
}

/** What one address's connections are counted under: itself, or its /64 for IPv6. */
export function connectionGroup(address: string): string {
  const plain = plainAddress(address);
  if (isIP(plain) !== 6) return plain;
  // Expand `::` so that the first four groups are the /64 prefix.
  const [head = '', tail] = plain.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g: string) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** Counts connections per address on a server and refuses those over the limits. */
export class ConnectionGuard {
  readonly #perIp = new Map<string, number>();
  readonly #limit: number;
  readonly #trusted: TrustedProxies | undefined;
  /** Connections refused for their address's count since start. */
  refusedPerIp = 0;
  /** Connections dropped for the total since start. */
  droppedTotal = 0;

  constructor(server: Server, limits: ConnectionLimits, trusted?: TrustedProxies) {
    this.#limit = limits.maxConnectionsPerIp;
    this.#trusted = trusted;
    server.maxConnections = limits.maxConnections;
    server.on('drop', () => this.droppedTotal++);
    server.on('connection', (socket: Socket) => this.#admit(socket));
  }

  /** Open connections counted for `address`'s group. */
  count(address: string): number {
    return this.#perIp.get(connectionGroup(address)) ?? 0;
  }

  #admit(socket: Socket): void {
    const address = socket.remoteAddress ?? '';
    if (this.#trusted?.trusts(address) === true) return;
    const group = connectionGroup(address);
    const open = this.#perIp.get(group) ?? 0;
    if (open >= this.#limit) {
      this.refusedPerIp++;
      // Cut at once, unanswered, as the total limit does: an answer would have to wait for the
      // peer (and node's parser already reads this socket), which is what the limit denies it.
      socket.destroy();
      return;
    }
    this.#perIp.set(group, open + 1);
    socket.once('close', () => {
      const left = (this.#perIp.get(group) ?? 1) - 1;
      if (left === 0) this.#perIp.delete(group);
      else this.#perIp.set(group, left);
    });
  }
}
