#!/usr/bin/env node
import { createDb } from '../create-db.js';
import { migrate } from '../migrate.js';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error(
    'DATABASE_URL is not set: set it to the Postgres URL to migrate (postgres://user:pass@host:5432/db)',
  );
  process.exit(1);
}

const db = createDb(url, { max: 1 });
try {
  const results = await migrate(db);
  for (const r of results)
    console.log(`${r.status === 'Success' ? 'applied' : r.status}: ${r.migrationName}`);
  console.log(
    results.length === 0 ? 'database is up to date' : `${results.length} migration(s) applied`,
  );
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
