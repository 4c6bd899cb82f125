/**
 * @module trader-key — the demo trader's API key kept across restarts of the same data
 * directory, so that a page signed in with it keeps working after `npm start` again. The key's
 * secret is in `<data>/demo-trader.key` (owner-only, written atomically, like admin.token): the
 * journal holds only its sealed hash, as for every key. At a start the kept key is used again
 * when the venue still has it and its sealed secret opens to the kept secret's hash; otherwise
 * (a first start, a deleted file or key, another master key) a new key is issued and kept.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { secretHash } from '../api/auth/signature.ts';
import type { SecretSealer } from '../api/auth/secret-sealing.ts';
import { FILE_MODE, writeAtomic } from '../config/data-dir.ts';
import type { ApiKeyRecord } from '../engine/registry.ts';

export const DEMO_TRADER_KEY_FILE = 'demo-trader.key';

export interface DemoKey {
  readonly accessKey: string;
  readonly secretKey: string;
}

/** Where the demo trader's key is kept, and whether the venue's record of it is still that key. */
export interface TraderKeyStore {
  /** The kept key, when one of `records` (the trader's keys on the venue) is it. */
  kept(records: readonly ApiKeyRecord[]): DemoKey | undefined;
  save(key: DemoKey): void;
}

/** The store of the data directory `root`, checking records with the venue's `sealer`. */
export function traderKeyFile(root: string, sealer: SecretSealer): TraderKeyStore {
  const path = join(root, DEMO_TRADER_KEY_FILE);
  return {
    kept(records) {
      let key: DemoKey;
      try {
        key = JSON.parse(readFileSync(path, 'utf8')) as DemoKey;
      } catch {
        return undefined;
      }
      if (typeof key?.accessKey !== 'string' || typeof key.secretKey !== 'string') return undefined;
      const record = records.find((r) => r.accessKey === key.accessKey);
      const opens =
        record !== undefined &&
        sealer.unseal(record.sealedSecret, record.accessKey) === secretHash(key.secretKey);
      return opens ? { accessKey: key.accessKey, secretKey: key.secretKey } : undefined;
    },
    save(key) {
      writeAtomic(
        path,
        `${JSON.stringify({ accessKey: key.accessKey, secretKey: key.secretKey })}\n`,
        FILE_MODE,
      );
    },
  };
}
