// The audit trail of the admin API: every change is stored (audit_events, read by listAuditEvents: who by
// the admin token's name, what, to which key, before and after, the request) and logged (msg "admin
// change", `audit: true`), and counted in /metrics (animal_store_admin_changes_total). The event is stored
// after the change it records: when the store fails between the two, the change stands (it is answered as
// made), the log line still records it, and an error line says the event is missing from the store.
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from '../ops/metrics.js';
import type { AuditRecord, AuditStore, KeyTerms } from '../store/operator-records.js';
import type { ApiKey } from '../store/store.js';

const dayMs = 86_400_000;

/** Who made a change, by which operation, to which key, in which request. */
export type AuditChange = Pick<AuditRecord, 'operation' | 'keyId' | 'actor' | 'requestId'>;
/** What the change did: a key's terms before and after, a rotation's grace, an unban's reset windows. */
export type AuditDetail = {
  before?: ApiKey;
  after?: ApiKey;
  previousSecretValidUntil?: string | null;
  reset?: string[];
};
export type Audit = (change: AuditChange, detail?: AuditDetail) => Promise<void>;

/** Who changed `keyId` by `operation`: the authenticated admin token (tokens.ts) and the request id. */
export const changeOf = (req: Request, res: Response, operation: string, keyId: string): AuditChange => ({
  operation,
  keyId,
  actor: { name: res.locals.adminName as string, token: res.locals.adminToken as string },
  requestId: req.id,
});

const terms = (key: ApiKey | undefined): KeyTerms | null =>
  key
    ? {
        plan: key.plan,
        quota: key.quota,
        label: key.label,
        customerId: key.customerId,
        expiresAt: key.expiresAt,
        disabled: key.disabledAt !== null,
      }
    : null;

export function auditTrail(
  logger: Logger,
  metrics: Pick<Metrics, 'adminChanges'>,
  store: Pick<AuditStore, 'add'>,
): Audit {
  return async (change, detail = {}) => {
    const record: AuditRecord = {
      ...change,
      at: new Date().toISOString(),
      before: terms(detail.before),
      after: terms(detail.after),
      previousSecretValidUntil: detail.previousSecretValidUntil ?? null,
      reset: detail.reset ?? null,
    };
    metrics.adminChanges.inc({ operation: change.operation });
    const { before, after } = record;
    logger.info(
      {
        audit: true,
        operation: change.operation,
        keyId: change.keyId,
        adminToken: change.actor.token,
        adminName: change.actor.name,
        ...(before && { before: { plan: before.plan, limits: before.quota } }),
        ...(after && { after: { plan: after.plan, limits: after.quota } }),
      },
      'admin change',
    );
    try {
      await store.add(record);
    } catch (error) {
      logger.error(
        { operation: change.operation, keyId: change.keyId, failure: (error as Error).message },
        'admin change made but its audit event not stored (the line above records it)',
      );
    }
  };
}

/**
 * Deletes the events older than `retentionDays`, now and every hour (a failure is retried the next hour);
 * the answer stops it.
 */
export function pruneAuditEvents(store: Pick<AuditStore, 'prune'>, retentionDays: number): () => void {
  const prune = () =>
    void store.prune(new Date(Date.now() - retentionDays * dayMs).toISOString()).catch(() => 0);
  prune();
  const timer = setInterval(prune, 3_600_000);
  timer.unref();
  return () => clearInterval(timer);
}
