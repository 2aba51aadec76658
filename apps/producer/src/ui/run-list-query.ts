import type { RunStatus } from '@cairn/engine';
import type {
  RunListFilter,
  RunListSort,
  RunListSortKey,
  RunListWaitingFilter,
} from '@cairn/store';
import { RUN_LIST_SORT_KEYS } from '@cairn/store';
import type { Principal } from '../api-keys.js';
import { OPEN_PRINCIPAL as ADMIN_VIEW } from '../api-key-auth.js';
import { ForbiddenError, InvalidParameterError } from '../errors.js';
import { pageParameter, statusParameter } from './ui-query.js';

/** The run list's filters, order and page, as the query string gives them. */
export interface RunListQuery {
  /** An admin's tenant filter; a tenant key's own tenant (forced). */
  tenant?: string;
  status?: RunStatus;
  entity?: string;
  /** Held runs only: paused for a person, parked for capacity, or either. */
  waiting?: RunListWaitingFilter;
  /** Created at or after (UTC). */
  createdFrom?: Date;
  /** Created before (UTC). */
  createdTo?: Date;
  /** Finished (a final status), ended at or after (UTC). */
  endedFrom?: Date;
  /** Finished, ended before (UTC). */
  endedTo?: Date;
  /** Taken over from a dead worker at least once (`recovered=1`); with a range, by an attempt started in it. */
  recovered?: boolean;
  /** Recovered by an attempt started at or after (UTC). */
  recoveredFrom?: Date;
  /** Recovered by an attempt started before (UTC). */
  recoveredTo?: Date;
  /** A run id's beginning, or words of the input. */
  search?: string;
  sort: RunListSort;
  /** 1-based. */
  page: number;
}

/** Runs per page of the list. */
export const RUNS_PER_PAGE = 50;

/** The longest text search accepted. */
const MAX_SEARCH_CHARS = 200;

const WAITING_FILTERS: readonly RunListWaitingFilter[] = ['person', 'capacity', 'either'];

/** The order a column sorts in when first clicked: times newest first, names and statuses A to Z. */
export function firstDirection(key: RunListSortKey): 'asc' | 'desc' {
  return key === 'created' || key === 'updated' ? 'desc' : 'asc';
}

/** The default order: newest first. */
const DEFAULT_SORT: RunListSort = { key: 'created', direction: 'desc' };

/** The run list's link with `filters`, on its first page, in the default order unless they say one (an admin's view: a tenant filter is kept). */
export function runListHref(filters: Partial<RunListQuery>): string {
  return `/ui?${runListSearch({ sort: DEFAULT_SORT, page: 1, ...filters }, ADMIN_VIEW)}`;
}

/**
 * The run list's query from the query string; each bad value is a 400 naming
 * its parameter. A tenant key's list is its tenant's: a `tenant` naming
 * another is a 403, its own is the same list.
 */
export function parseRunListQuery(
  get: (name: string) => string | undefined,
  principal: Principal,
): RunListQuery {
  const text = (name: string) => get(name)?.trim() || undefined;
  const tenant = text('tenant');
  if (principal.tenantId !== null && tenant !== undefined && tenant !== principal.tenantId) {
    throw new ForbiddenError(
      `tenant: only an admin key may filter by tenant; this key sees tenant ${principal.tenantId}'s runs only`,
    );
  }
  const search = text('q');
  if (search !== undefined && search.length > MAX_SEARCH_CHARS)
    throw new InvalidParameterError('q', `must be at most ${MAX_SEARCH_CHARS} characters`);
  const created = rangeParameters('created', get);
  const ended = rangeParameters('ended', get);
  const recoveredRange = rangeParameters('recovered', get);
  const recovered = flagParameter('recovered', get('recovered'));
  return {
    tenant: principal.tenantId ?? tenant,
    status: statusParameter(get('status')),
    entity: text('entity'),
    waiting: waitingParameter(get('waiting'), get('paused')),
    createdFrom: created.from,
    createdTo: created.to,
    endedFrom: ended.from,
    endedTo: ended.to,
    recovered:
      recovered || recoveredRange.from !== undefined || recoveredRange.to !== undefined
        ? true
        : undefined,
    recoveredFrom: recoveredRange.from,
    recoveredTo: recoveredRange.to,
    search,
    sort: sortParameter(get('sort'), get('dir')),
    page: pageParameter('page', get('page')) ?? 1,
  };
}

/** The store filter of `query`'s page. */
export function runListFilter(query: RunListQuery): RunListFilter {
  return {
    tenantId: query.tenant,
    statuses: query.status ? [query.status] : [],
    entityName: query.entity,
    waitingFor: query.waiting,
    createdFrom: query.createdFrom,
    createdBefore: query.createdTo,
    endedFrom: query.endedFrom,
    endedBefore: query.endedTo,
    recovered: query.recovered
      ? { from: query.recoveredFrom, before: query.recoveredTo }
      : undefined,
    search: query.search,
    sort: query.sort,
    offset: (query.page - 1) * RUNS_PER_PAGE,
    limit: RUNS_PER_PAGE,
  };
}

/**
 * `query` as a query string (`tenant` left out for a tenant key, whose list
 * is its tenant's anyway); the default order and page 1 are left out.
 */
export function runListSearch(query: RunListQuery, principal: Principal): string {
  const search = new URLSearchParams();
  if (query.tenant && principal.tenantId === null) search.set('tenant', query.tenant);
  if (query.status) search.set('status', query.status);
  if (query.entity) search.set('entity', query.entity);
  if (query.waiting) search.set('waiting', query.waiting);
  if (query.createdFrom) search.set('created_from', dateTimeValue(query.createdFrom));
  if (query.createdTo) search.set('created_to', dateTimeValue(query.createdTo));
  if (query.endedFrom) search.set('ended_from', dateTimeValue(query.endedFrom));
  if (query.endedTo) search.set('ended_to', dateTimeValue(query.endedTo));
  if (query.recovered) search.set('recovered', '1');
  if (query.recoveredFrom) search.set('recovered_from', dateTimeValue(query.recoveredFrom));
  if (query.recoveredTo) search.set('recovered_to', dateTimeValue(query.recoveredTo));
  if (query.search) search.set('q', query.search);
  if (query.sort.key !== DEFAULT_SORT.key || query.sort.direction !== DEFAULT_SORT.direction) {
    search.set('sort', query.sort.key);
    search.set('dir', query.sort.direction);
  }
  if (query.page > 1) search.set('page', String(query.page));
  return search.toString();
}

/** An instant as a `datetime-local` input's value, in UTC (to the minute, or the second when it has one). */
export function dateTimeValue(at: Date): string {
  const iso = at.toISOString();
  return iso.slice(17, 19) === '00' ? iso.slice(0, 16) : iso.slice(0, 19);
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?Z?$/;

/** A date and time in UTC (`2026-12-02T14:30`, seconds and a `Z` optional); absent or empty is undefined, anything else a 400 naming `name`. */
function dateTimeParameter(name: string, raw: string | undefined): Date | undefined {
  const value = raw?.trim();
  if (value === undefined || value === '') return undefined;
  const parts = DATE_TIME.exec(value);
  if (parts) {
    const [, year, month, day, hour, minute, second = '00'] = parts;
    const at = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}Z`);
    // A date that does not read back as written (2026-02-30, 24:00) does not exist.
    if (
      !Number.isNaN(at.getTime()) &&
      at.toISOString().slice(0, 19) === `${year}-${month}-${day}T${hour}:${minute}:${second}`
    )
      return at;
  }
  throw new InvalidParameterError(
    name,
    `must be a date and time in UTC like 2026-12-02T14:30, got "${value.slice(0, 40)}"`,
  );
}

/**
 * The range `<name>_from` to `<name>_to` (each a {@link dateTimeParameter});
 * a `<name>_to` not after `<name>_from` is a 400 naming it.
 */
function rangeParameters(
  name: string,
  get: (name: string) => string | undefined,
): { from?: Date; to?: Date } {
  const from = dateTimeParameter(`${name}_from`, get(`${name}_from`));
  const to = dateTimeParameter(`${name}_to`, get(`${name}_to`));
  if (from && to && to <= from)
    throw new InvalidParameterError(`${name}_to`, `must be after ${name}_from`);
  return { from, to };
}

/** A flag: `1` on, absent or empty off, anything else a 400 naming `name`. */
function flagParameter(name: string, raw: string | undefined): boolean {
  const value = raw?.trim();
  if (value === undefined || value === '') return false;
  if (value === '1') return true;
  throw new InvalidParameterError(name, `must be 1 (or left out), got "${value.slice(0, 40)}"`);
}

/** `waiting` (person, capacity or either); `paused=1`, as older links say, is `person`. */
function waitingParameter(
  raw: string | undefined,
  paused: string | undefined,
): RunListWaitingFilter | undefined {
  if (raw === undefined || raw === '') return paused === '1' ? 'person' : undefined;
  if (!(WAITING_FILTERS as readonly string[]).includes(raw))
    throw new InvalidParameterError('waiting', `must be one of ${WAITING_FILTERS.join(', ')}`);
  return raw as RunListWaitingFilter;
}

function sortParameter(key: string | undefined, dir: string | undefined): RunListSort {
  if ((key === undefined || key === '') && (dir === undefined || dir === '')) return DEFAULT_SORT;
  const sortKey = key === undefined || key === '' ? DEFAULT_SORT.key : key;
  if (!(RUN_LIST_SORT_KEYS as readonly string[]).includes(sortKey))
    throw new InvalidParameterError('sort', `must be one of ${RUN_LIST_SORT_KEYS.join(', ')}`);
  if (dir !== undefined && dir !== '' && dir !== 'asc' && dir !== 'desc')
    throw new InvalidParameterError('dir', 'must be asc or desc');
  const typed = sortKey as RunListSortKey;
  return { key: typed, direction: dir === 'asc' || dir === 'desc' ? dir : firstDirection(typed) };
}
