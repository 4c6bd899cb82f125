/**
 * @module trusted-proxy-entry — what a `--trusted-proxies` entry may be, checked when the options
 * are read (options.ts) and when the list is built (src/api/http/client-ip.ts).
 */
import { isIP } from 'node:net';

/**
 * Parses one `--trusted-proxies` entry: an address (`10.0.0.1`, `::1`) or a CIDR range
 * (`10.0.0.0/8`, `fd00::/8`). Returns the problem in words, or undefined when it is valid.
 */
export function trustedProxyProblem(entry: string): string | undefined {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return `'${entry}' is not an IP address or CIDR range`;
  if (slash === -1) return undefined;
  const bits = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `'${entry}': the prefix must be 0 to ${max}`;
  return undefined;
}
