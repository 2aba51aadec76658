/** Which session: sessions are scoped by tenant, so the same `sessionId` in two tenants is two sessions. */
export interface SessionKey {
  /** The tenant whose session it is; null: the no-tenant session (an admin key's). */
  tenantId: string | null;
  sessionId: string;
}

/** The `tenant_key` column's value for `tenantId`: '' stands for no tenant, since a key column cannot be null. */
export function tenantKeyOf(tenantId: string | null): string {
  return tenantId ?? '';
}
