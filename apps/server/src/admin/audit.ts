// The audit trail of the admin API: one log record per change (msg "admin change", `audit: true`), naming
// the admin token by its fingerprint, the operation, the key, and for plan and limits the values before
// and after; each counted in /metrics (animal_store_admin_changes_total).
import type { Logger } from 'pino';
import type { Metrics } from '../ops/metrics.js';
import type { ApiKey } from '../store/store.js';

export type Audit = (
  change: { operation: string; adminToken: string; keyId: string },
  before?: ApiKey,
  after?: ApiKey,
) => void;

const terms = (key: ApiKey | undefined) => key && { plan: key.plan, limits: key.quota };

export function auditLog(logger: Logger, metrics: Pick<Metrics, 'adminChanges'>): Audit {
  return (change, before, after) => {
    metrics.adminChanges.inc({ operation: change.operation });
    logger.info(
      {
        audit: true,
        ...change,
        ...(before && { before: terms(before) }),
        ...(after && { after: terms(after) }),
      },
      'admin change',
    );
  };
}
