import type { Kysely } from 'kysely';
import type { EntityKind, RunStatus } from '@cairn/engine';
import { toRunSummaryView, type RunSummaryView } from './run-view.js';
import type { Database } from './schema.js';

/** Which runs {@link listRuns} returns, newest first. */
export interface RunListFilter {
  /** Only runs in one of these statuses; empty or absent: every status. */
  statuses?: readonly RunStatus[];
  /** Only runs of this entity name (an agent or a team). */
  entityName?: string;
  /** Only runs of this entity kind. */
  entityKind?: EntityKind;
  /** Only this tenant's runs (a tenant-bound key's view); absent: every run. */
  tenantId?: string;
  /**
   * Only top-level runs (member runs are reached through their team).
   * @defaultValue true
   */
  topLevelOnly?: boolean;
  /** How many runs to skip. @defaultValue 0 */
  offset?: number;
  /** How many runs at most. */
  limit: number;
}

/** One page of {@link listRuns}. */
export interface RunListPage {
  runs: RunSummaryView[];
  /** True when runs past this page match the filter. */
  hasMore: boolean;
}

/** A page of run summaries matching `filter`, newest first (one query). */
export async function listRuns(db: Kysely<Database>, filter: RunListFilter): Promise<RunListPage> {
  let query = db.selectFrom('runs').selectAll();
  if (filter.statuses && filter.statuses.length > 0)
    query = query.where('status', 'in', filter.statuses);
  if (filter.entityName !== undefined) query = query.where('entity_name', '=', filter.entityName);
  if (filter.entityKind !== undefined) query = query.where('entity_kind', '=', filter.entityKind);
  if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.topLevelOnly !== false) query = query.where('parent_run_id', 'is', null);
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('run_id', 'desc')
    .offset(filter.offset ?? 0)
    .limit(filter.limit + 1)
    .execute();
  return {
    runs: rows.slice(0, filter.limit).map(toRunSummaryView),
    hasMore: rows.length > filter.limit,
  };
}
