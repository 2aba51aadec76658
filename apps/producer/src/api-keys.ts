import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { parseKeyRing, type KeyAccess } from '@cairn/runtime';

export type { KeyAccess };

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

/** Options of {@link ApiKeyRing}. */
export interface ApiKeyRingOptions {
  /**
   * `CAIRN_SESSION_SECRET`: signs browser sessions, so adding or removing a
   * key signs out only that key's sessions, and rotating the secret signs out
   * every one.
   * @defaultValue a secret derived from every configured key (changing the keys ends every session)
   */
  sessionSecret?: string;
}

/**
 * The configured API keys (`CAIRN_API_KEYS`, `CAIRN_READ_API_KEYS`: `key` for
 * an admin, `tenant:key` for a key bound to a tenant, as `parseKeyRing` of
 * `@cairn/runtime` reads them: a ring that does not parse throws its
 * `ConfigError`) and the one lookup every way in (bearer header, browser
 * session) goes through. Presented keys are compared as SHA-256 digests in
 * constant time, against every known key.
 */
export class ApiKeyRing {
  /**
   * What signs browser sessions: derived from `sessionSecret` when given, else
   * from every configured key, so producers with the same keys (or secret)
   * accept each other's sessions.
   */
  readonly secret: Buffer;
  private readonly known: KnownKey[];

  constructor(
    apiKeys: readonly string[],
    readApiKeys: readonly string[] = [],
    options: ApiKeyRingOptions = {},
  ) {
    const entries = parseKeyRing(apiKeys, readApiKeys);
    this.secret =
      options.sessionSecret !== undefined
        ? createHmac('sha256', 'cairn-browser-session-v1')
            .update(`session-secret\0${options.sessionSecret}`)
            .digest()
        : createHmac('sha256', 'cairn-browser-session-v1')
            .update(
              entries
                .map((e) => `${e.access}\0${e.entry}`)
                .sort()
                .join('\n'),
            )
            .digest();
    this.known = entries.map((e) => ({
      access: e.access,
      tenantId: e.tenantId,
      digest: createHash('sha256').update(e.key).digest(),
      keyId: createHmac('sha256', this.secret)
        .update(`key-id\0${e.entry}`)
        .digest('base64url')
        .slice(0, 22),
    }));
  }

  /** True when any key is configured: requests then need one. */
  get enabled(): boolean {
    return this.known.length > 0;
  }

  /** The principal of a presented key, or undefined (each key is configured once: `parseKeyRing`). */
  find(presented: string): Principal | undefined {
    const digest = createHash('sha256').update(presented).digest();
    let found: KnownKey | undefined;
    // Every known key is compared, so the time taken says nothing of which one matched.
    for (const key of this.known) {
      if (timingSafeEqual(key.digest, digest)) found = key;
    }
    return found && principalOf(found);
  }

  /** The principal of a key by its {@link Principal.keyId}, or undefined when that key is no longer configured. */
  byKeyId(keyId: string): Principal | undefined {
    const found = this.known.find((key) => key.keyId === keyId);
    return found && principalOf(found);
  }
}

function principalOf(key: KnownKey): Principal {
  return { access: key.access, tenantId: key.tenantId, keyId: key.keyId };
}
