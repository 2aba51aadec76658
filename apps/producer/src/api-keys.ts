import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** What a key may do: everything, or only read (GET and HEAD). */
export type KeyAccess = 'full' | 'read';

/** Who a request speaks for, once its key (bearer or browser session) is known. */
export interface Principal {
  access: KeyAccess;
  /** The tenant the key is bound to (`tenant:key`): it sees only that tenant's runs and sessions; null: an admin key. */
  tenantId: string | null;
  /** A stable id of the key that is not the key: an HMAC of it under {@link ApiKeyRing.secret}. */
  keyId: string;
}

interface KnownKey extends Principal {
  digest: Buffer;
}

/** `tenant:key` in `CAIRN_API_KEYS` / `CAIRN_READ_API_KEYS`; any other entry is an unbound (admin) key. */
const TENANT_BOUND = /^([A-Za-z0-9][A-Za-z0-9_.-]*):(.+)$/;

/**
 * The configured API keys (`CAIRN_API_KEYS`, `CAIRN_READ_API_KEYS`: `key` for
 * an admin, `tenant:key` for a key bound to a tenant) and the one lookup every
 * way in (bearer header, browser session) goes through.
 * Presented keys are compared as SHA-256 digests in constant time, against
 * every known key.
 */
export class ApiKeyRing {
  /**
   * A secret derived from every configured key: it signs browser sessions, so
   * producers with the same keys accept each other's sessions, and changing
   * the keys ends every session.
   */
  readonly secret: Buffer;
  private readonly known: KnownKey[];

  constructor(apiKeys: readonly string[], readApiKeys: readonly string[] = []) {
    this.secret = createHmac('sha256', 'cairn-browser-session-v1')
      .update([...apiKeys.map((k) => `full\0${k}`), ...readApiKeys.map((k) => `read\0${k}`)].sort().join('\n'))
      .digest();
    const entry = (configured: string, access: KeyAccess): KnownKey => {
      const bound = TENANT_BOUND.exec(configured);
      const [tenantId, key] = bound ? [bound[1]!, bound[2]!] : [null, configured];
      return {
        access,
        tenantId,
        digest: createHash('sha256').update(key).digest(),
        keyId: createHmac('sha256', this.secret).update(`key-id\0${configured}`).digest('base64url').slice(0, 22),
      };
    };
    this.known = [...apiKeys.map((k) => entry(k, 'full')), ...readApiKeys.map((k) => entry(k, 'read'))];
  }

  /** True when any key is configured: requests then need one. */
  get enabled(): boolean {
    return this.known.length > 0;
  }

  /** The principal of a presented key, or undefined; a key listed as both full and read-only gets full access. */
  find(presented: string): Principal | undefined {
    const digest = createHash('sha256').update(presented).digest();
    let found: KnownKey | undefined;
    for (const key of this.known) {
      if (timingSafeEqual(key.digest, digest) && (!found || key.access === 'full')) found = key;
    }
    return found && principalOf(found);
  }

  /** The principal of a key by its {@link Principal.keyId}, or undefined when that key is no longer configured. */
  byKeyId(keyId: string): Principal | undefined {
    const matches = this.known.filter((key) => key.keyId === keyId);
    const found = matches.find((key) => key.access === 'full') ?? matches[0];
    return found && principalOf(found);
  }
}

function principalOf(key: KnownKey): Principal {
  return { access: key.access, tenantId: key.tenantId, keyId: key.keyId };
}
