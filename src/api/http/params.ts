/** @module params — query-string and form-body parsing into ordered, raw-preserving request parameters. */
import type { RequestParam } from './types.ts';

const PLUS = /\+/g;

/**
 * Decodes one name or value as `application/x-www-form-urlencoded` does (`+` is a space, `%XX`
 * escapes are UTF-8 bytes). Never throws: text whose percent-encoding is malformed (a `%` not
 * followed by two hex digits, or escapes that are not valid UTF-8) is returned exactly as
 * received, undecoded, `+` included. Clients such as ccxt put raw values into the URL unencoded,
 * so a value like `p%ss` is most likely meant literally, and it is also what such a client signed.
 */
export function decodeComponent(text: string): string {
  const hasPercent = text.indexOf('%') !== -1;
  const hasPlus = text.indexOf('+') !== -1;
  if (!hasPercent && !hasPlus) return text;
  const spaced = hasPlus ? text.replace(PLUS, ' ') : text;
  if (!hasPercent) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return text;
  }
}

/**
 * Appends the parameters of `text` (a query string without its `?`, or a form body) to `out`,
 * in the order they appear. Empty segments (`a=1&&b=2`, a trailing `&`) are skipped; a segment
 * without `=` is a parameter with an empty value. Each parameter keeps its segment exactly as
 * received in `raw`, for signatures computed over undecoded text. Names may repeat.
 */
export function parseParams(text: string, out: RequestParam[]): void {
  let start = 0;
  const length = text.length;
  while (start < length) {
    let end = text.indexOf('&', start);
    if (end === -1) end = length;
    if (end > start) {
      const raw = text.slice(start, end);
      const eq = raw.indexOf('=');
      if (eq === -1) out.push({ name: decodeComponent(raw), value: '', raw });
      else
        out.push({ name: decodeComponent(raw.slice(0, eq)), value: decodeComponent(raw.slice(eq + 1)), raw });
    }
    start = end + 1;
  }
}
