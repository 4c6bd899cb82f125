/**
 * @module client-ip — who a request comes from: the socket's address, or, when that address is a
 * trusted proxy, the rightmost untrusted hop of `X-Forwarded-For` (docs/api-keys.md, "Client
 * address and proxies"). Rate limits, IP-bound keys and the logs all use this one answer.
 */
import { BlockList, isIP } from 'node:net';
import { trustedProxyProblem } from '../../config/trusted-proxy-entry.ts';

/** At most this many X-Forwarded-For hops are read (from the right); a longer chain is cut. */
const MAX_FORWARDED_HOPS = 32;

/** An address as the server compares it: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) as plain IPv4. */
export function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/**
 * The addresses whose forwarded-for header is believed. None by default: then every request's
 * address is its socket's, whatever headers it carries.
 */
export class TrustedProxies {
  readonly #list = new BlockList();
  /** The entries as given (for the start-up log). */
  readonly entries: readonly string[];

  /** `entries`: addresses or CIDR ranges; throws naming the first invalid one. */
  constructor(entries: readonly string[] = []) {
    for (const entry of entries) {
      const problem = trustedProxyProblem(entry);
      if (problem !== undefined) throw new RangeError(`trusted proxies: ${problem}`);
      const slash = entry.indexOf('/');
      const address = slash === -1 ? entry : entry.slice(0, slash);
      const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      if (slash === -1) this.#list.addAddress(address, family);
      else this.#list.addSubnet(address, Number(entry.slice(slash + 1)), family);
    }
    this.entries = [...entries];
  }

  /** Whether any proxy is trusted at all. */
  get any(): boolean {
    return this.entries.length > 0;
  }

  /** Whether `address` (a socket's or a hop's) is a trusted proxy. */
  trusts(address: string): boolean {
    if (this.entries.length === 0) return false;
    const plain = plainAddress(address);
    const family = isIP(plain);
    return family !== 0 && this.#list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
  }

  /**
   * The client's address: `socketAddress` unless it is trusted; then the X-Forwarded-For hops are
   * walked from the right, past trusted proxies, and the first untrusted one is the client. A hop
   * that is not an address ends the walk at the last trusted hop (a proxy that forwards garbage is
   * answered as itself), and so does a chain made only of trusted hops.
   */
  clientAddress(socketAddress: string, forwardedFor: string | string[] | undefined): string {
    let client = plainAddress(socketAddress);
    if (forwardedFor === undefined || !this.trusts(client)) return client;
    const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor;
    const hops = header.split(',');
    const last = Math.max(0, hops.length - MAX_FORWARDED_HOPS);
    for (let i = hops.length - 1; i >= last; i--) {
      const hop = plainAddress((hops[i] as string).trim());
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!this.trusts(hop)) return hop;
    }
    return client;
  }
}
