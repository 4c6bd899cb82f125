/**
 * @module messages — what the page tells a trader when the venue refuses: the wire's message is
 * for programs (ccxt reads the real API's Chinese text of a bad withdrawal address, the signing
 * recipe of a bad signature, the operator's command of a missing deposit address); the page says
 * what the person should do, keeping the code for reference. Everything else is shown as sent.
 */
import { ApiError, KEY_REFUSED } from './rest.ts';

/** Where a refusal happened: it changes what the person can do about it. */
export type Context = 'sign-in' | 'session' | 'withdraw' | 'deposit' | 'other';

/** The real API's text for an address that is not verified (the wire keeps it first, for ccxt). */
const UNVERIFIED_ADDRESS = /^提币地址有误[^(]*/;

/** A refusal as a sentence for the person at the page, ending with the code. */
export function explain(error: unknown, context: Context = 'other'): string {
  if (!(error instanceof ApiError)) return `The venue could not be reached: ${String(error)}`;
  const { code, message } = error;
  const tail = ` (code ${code})`;
  if (code === KEY_REFUSED) {
    if (context === 'sign-in') {
      return /unknown accesskey/.test(message)
        ? `This API key is not known to the venue: check that you copied the whole key${tail}.`
        : `The secret does not match this API key: paste the secret shown with the key again${tail}.`;
    }
    return `Signed out: the venue no longer accepts this API key (it was revoked, or the venue was reset). Sign in again with a current key${tail}.`;
  }
  if (UNVERIFIED_ADDRESS.test(message)) {
    return `This address is not one of your verified withdrawal addresses. Withdrawals go only to addresses the venue has verified for you: ask the operator to add and verify it, then try again${tail}.`;
  }
  if (context === 'deposit' && /deposit address/.test(message)) {
    const coin = /no (\S+) deposit address/.exec(message)?.[1]?.toUpperCase() ?? 'this coin';
    return `You have no ${coin} deposit address yet: ask the venue's operator to create one for your account${tail}.`;
  }
  return `${message}${tail}`;
}
