/**
 * @module key-issuer — API key material made under the venue's master key: a new key's access key,
 * its secret (shown once) and its sealed secret hash (what the engine keeps); a renewed secret;
 * and whether a sealed secret opens (admin API, the demo's keys).
 */
import type { KeyIssuer } from '../admin/admin-routes.ts';
import { generateApiCredentials, issueSealedKey, type SecretSealer } from './secret-sealing.ts';

/** Every operation of a KeyIssuer on `sealer`. */
export function keyIssuer(sealer: SecretSealer): KeyIssuer & Required<Pick<KeyIssuer, 'renew' | 'opens'>> {
  return {
    issue: () => issueSealedKey(sealer),
    renew: (accessKey) => {
      const c = generateApiCredentials();
      return { secretKey: c.secret, sealedSecret: sealer.seal(c.secretHash, accessKey) };
    },
    opens: (sealedSecret, accessKey) => sealer.unseal(sealedSecret, accessKey) !== undefined,
  };
}
