import { createClient } from '@cairn/client';

// Another service asks over HTTP: no database, no Redis, no agent code.
const cairn = createClient({ baseUrl: process.env.CAIRN_URL ?? 'http://127.0.0.1:3000' });
const { run_id } = await cairn.runs.create({
  kind: 'team',
  name: 'support-team',
  input: process.argv[2] ?? 'Hello',
});
console.log(run_id);
