import { CairnError, EntityNotFoundError } from '@cairn/engine';
import type { RunStatus } from '@cairn/engine';
import type { EntityRef } from '@cairn/engine/store';

/** Base class of the errors only the store throws. */
export class StoreError extends CairnError {}

/** A migration failed; the database is left at the last migration that succeeded. */
export class MigrationError extends StoreError {
  constructor(
    readonly migrationName: string | undefined,
    options: { cause: unknown },
  ) {
    super(`migration ${migrationName ?? '(unknown)'} failed: ${String(options.cause)}`, options);
  }
}

/** The database lacks migrations this build needs: the process was started before `npm run migrate`. */
export class StoreNotMigratedError extends StoreError {
  constructor(readonly pendingMigrations: readonly string[]) {
    super(
      `the store is not migrated (pending: ${pendingMigrations.join(', ')}): ` +
        'run `npm run migrate` (or set CAIRN_MIGRATE=1)',
    );
  }
}

/** The run already reached a terminal status, so it cannot be cancelled. */
export class RunAlreadyTerminalError extends StoreError {
  constructor(
    readonly runId: string,
    readonly status: RunStatus,
  ) {
    super(`run ${runId} is already ${status}`);
  }
}

/** A session still holds runs that are not finished: cancel them (or let them finish) before deleting it. */
export class SessionHasLiveRunsError extends StoreError {
  constructor(
    readonly sessionId: string,
    readonly runIds: readonly string[],
  ) {
    super(
      `session ${sessionId} has runs that are not finished (${runIds.join(', ')}): cancel them before deleting the session`,
    );
  }
}

/** Runs of other sessions were forked from this session's runs and read their history through them. */
export class SessionHasForksError extends StoreError {
  constructor(
    readonly sessionId: string,
    readonly forkIds: readonly string[],
  ) {
    super(
      `session ${sessionId} has runs that runs of other sessions were forked from and read their history through (${forkIds.join(', ')}): delete those first`,
    );
  }
}

/**
 * Live workers serve entities, but none by this name (nor did any worker
 * ever announce it): the message lists what they serve, the first
 * `served.length` of `servedCount`.
 */
export class EntityNotServedError extends EntityNotFoundError {
  constructor(
    kind: string,
    entityName: string,
    readonly served: readonly EntityRef[],
    readonly servedCount: number,
  ) {
    const listed = served.map((e) => `${e.kind} ${JSON.stringify(e.name)}`).join(', ');
    const more = servedCount > served.length ? ` (and ${servedCount - served.length} more)` : '';
    super(
      kind,
      entityName,
      `no ${kind} named ${JSON.stringify(entityName)} is served by the live workers; they serve ${listed}${more}`,
    );
  }
}
