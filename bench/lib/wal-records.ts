import type pg from 'pg';
import { fmt } from './figure.js';
import { lsnText, walPosition } from './wal.js';

/** WAL records of one kind on one relation, averaged per measured operation. */
export interface WalRecordGroup {
  /** `Heap/INSERT`, `Btree/INSERT_LEAF`, `Transaction/COMMIT`, ... */
  record: string;
  /** The relation the record touches (first block reference), or '' for none. */
  relation: string;
  records: number;
  bytes: number;
}

interface RecordRow {
  resource_manager: string;
  record_type: string;
  record_length: number;
  fpi_length: number;
  block_ref: string | null;
}

/**
 * Runs `work` `times` times and returns its WAL records grouped by kind and
 * relation, per run of `work`, via pg_walinspect (PostgreSQL 15+, superuser);
 * undefined when the extension is not available.
 */
export async function walRecordBreakdown(
  client: pg.Client,
  work: () => Promise<void>,
  times: number,
): Promise<WalRecordGroup[] | undefined> {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  } catch {
    return undefined;
  }
  const start = await walPosition(client);
  for (let i = 0; i < times; i++) await work();
  const end = await walPosition(client);
  const { rows } = await client.query<RecordRow>(
    'SELECT resource_manager, record_type, record_length, fpi_length, block_ref FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)',
    [lsnText(start), lsnText(end)],
  );
  const names = new Map<string, string>();
  const groups = new Map<string, WalRecordGroup>();
  for (const row of rows) {
    const node = /rel \d+\/\d+\/(\d+)/.exec(row.block_ref ?? '')?.[1];
    if (node && !names.has(node)) {
      const { rows: rel } = await client.query<{ name: string | null }>(
        'SELECT pg_filenode_relation(0, $1::oid)::regclass::text AS name',
        [node],
      );
      names.set(node, rel[0]?.name ?? `filenode ${node}`);
    }
    const record = `${row.resource_manager}/${row.record_type}`;
    const relation = node ? (names.get(node) ?? '') : '';
    const key = `${record} ${relation}`;
    const group = groups.get(key) ?? { record, relation, records: 0, bytes: 0 };
    group.records += 1 / times;
    group.bytes += Number(row.record_length) / times;
    groups.set(key, group);
  }
  return [...groups.values()].sort((a, b) => b.bytes - a.bytes);
}

/** The groups as one line: `Heap/INSERT runs 1x 200 B; ...`. */
export function describeRecords(groups: readonly WalRecordGroup[]): string {
  return groups
    .map(
      (g) =>
        `${g.record}${g.relation ? ` ${g.relation}` : ''} ${fmt(g.records)}x ${fmt(g.bytes)} B`,
    )
    .join('; ');
}

/** The groups' bytes summed per relation (records without one under `other`), largest first, as one line. */
export function describeByRelation(groups: readonly WalRecordGroup[]): string {
  const totals = new Map<string, number>();
  for (const g of groups) {
    const relation = g.relation || 'other';
    totals.set(relation, (totals.get(relation) ?? 0) + g.bytes);
  }
  const all = [...totals.values()].reduce((a, b) => a + b, 0);
  return `${fmt(all)} B in all: ${[...totals.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([relation, bytes]) => `${relation} ${fmt(bytes)} B`)
    .join('; ')}`;
}
