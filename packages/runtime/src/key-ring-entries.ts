import { ConfigError } from './errors.js';

/** What a key may do: everything, or only read (GET and HEAD). */
export type KeyAccess = 'full' | 'read';

/** The variables the key ring is configured by. */
export type KeyRingVariable = 'CAIRN_API_KEYS' | 'CAIRN_READ_API_KEYS';

/** One configured API key, parsed. */
export interface KeyRingEntry {
  variable: KeyRingVariable;
  /** 1-based place of the entry in its variable's comma-separated list. */
  position: number;
  access: KeyAccess;
  /** The tenant the key is bound to (`tenant:key`); null: an admin key. */
  tenantId: string | null;
  /** The secret a client presents. */
  key: string;
  /** The entry as configured (`tenant:key` or `key`). */
  entry: string;
}

/** A tenant name: a letter or digit, then letters, digits, `_`, `.` or `-`. */
const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * Tenant names no key may be bound to (compared case-insensitively): `admin`
 * reads as an admin key, and the others as the "no tenant" the code keeps as
 * null.
 */
export const RESERVED_TENANT_NAMES: readonly string[] = ['admin', 'null', 'undefined', 'none'];

/**
 * Parses `CAIRN_API_KEYS` and `CAIRN_READ_API_KEYS` (already split at commas)
 * into one key ring, the one reading both the environment's config and the
 * producer's key lookup go through. Rules: an entry without `:` is an admin
 * key (so an admin key cannot contain `:`); an entry with `:` is
 * `tenant:key`, split at its first `:` (the key may contain more), with a
 * tenant name of letters, digits, `_`, `.`, `-` that is not reserved
 * ({@link RESERVED_TENANT_NAMES}); each key appears once across both lists,
 * since a key listed twice would mean two things at once. Throws
 * {@link ConfigError} naming the variable and the entry by position and
 * tenant, never the key.
 */
export function parseKeyRing(
  apiKeys: readonly string[],
  readApiKeys: readonly string[] = [],
): KeyRingEntry[] {
  const entries = [
    ...apiKeys.map((entry, i) => parseEntry('CAIRN_API_KEYS', i + 1, 'full', entry)),
    ...readApiKeys.map((entry, i) => parseEntry('CAIRN_READ_API_KEYS', i + 1, 'read', entry)),
  ];
  const byKey = new Map<string, KeyRingEntry>();
  for (const entry of entries) {
    const earlier = byKey.get(entry.key);
    if (earlier) {
      throw new ConfigError(
        entry.variable,
        `entry ${entry.position} (${describe(entry)}) has the same key as ${earlier.variable} entry ${earlier.position} (${describe(earlier)}): a key may be listed once, in one of the two variables`,
      );
    }
    byKey.set(entry.key, entry);
  }
  return entries;
}

function parseEntry(
  variable: KeyRingVariable,
  position: number,
  access: KeyAccess,
  entry: string,
): KeyRingEntry {
  const colon = entry.indexOf(':');
  if (colon < 0) return { variable, position, access, tenantId: null, key: entry, entry };
  const tenantId = entry.slice(0, colon);
  const key = entry.slice(colon + 1);
  // The part before ':' is not named: in a mistyped entry it may be part of the key.
  if (!TENANT_NAME.test(tenantId) || key === '') {
    throw new ConfigError(
      variable,
      `entry ${position} has a ":" but is not tenant:key (a tenant name is letters, digits, "_", "." or "-", starting with a letter or digit; an admin key may not contain ":")`,
    );
  }
  if (RESERVED_TENANT_NAMES.includes(tenantId.toLowerCase())) {
    throw new ConfigError(
      variable,
      `entry ${position}: tenant "${tenantId}" is reserved (${RESERVED_TENANT_NAMES.join(', ')}); an admin key is a key without "tenant:"`,
    );
  }
  return { variable, position, access, tenantId, key, entry };
}

function describe(entry: KeyRingEntry): string {
  return entry.tenantId === null ? 'an admin key' : `tenant "${entry.tenantId}"`;
}
