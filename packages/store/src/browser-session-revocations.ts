import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Signed-out browser sessions, by the nonce their cookie carries. A session
 * cookie is signed and holds its own expiry, so it stays valid by itself
 * until then; a sign-out records its nonce here (until that expiry), and
 * every producer refuses it from then on.
 */
export class BrowserSessionRevocations {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records the sign-out of the session `nonce` (kept until `expiresAt`), and forgets revocations whose cookies have expired. */
  async revoke(nonce: string, expiresAt: Date): Promise<void> {
    await sql`
      with forgotten as (delete from revoked_browser_sessions where expires_at < now())
      insert into revoked_browser_sessions (nonce, expires_at) values (${nonce}, ${expiresAt})
      on conflict (nonce) do nothing`.execute(this.db);
  }

  /** True when the session `nonce` was signed out. */
  async isRevoked(nonce: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('revoked_browser_sessions')
      .select('nonce')
      .where('nonce', '=', nonce)
      .executeTakeFirst();
    return row !== undefined;
  }
}
