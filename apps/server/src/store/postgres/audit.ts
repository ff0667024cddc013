// The audit trail on PostgreSQL: one row per admin change, numbered by an identity column (one sequence for
// every instance, so later changes have higher numbers).
import {
  type AuditRow,
  auditColumns,
  auditPageNames,
  auditPageQuery,
  auditPageValues,
  auditValues,
  toAuditEvent,
} from '../audit-query.js';
import type { AuditStore } from '../operator-records.js';
import type { Pg } from './database.js';

const placeholders = auditColumns.split(', ').map((_, i) => `$${i + 1}`);
const pageQuery = auditPageQuery((name) => {
  const n = auditPageNames.indexOf(name) + 1;
  return name === 'before' || name === 'limit' ? `$${n}::bigint` : `$${n}::text`;
});

export function createPostgresAuditStore({ query }: Pg): AuditStore {
  return {
    async add(record) {
      await query(
        `INSERT INTO audit_events (${auditColumns}) VALUES (${placeholders.join(', ')})`,
        auditValues(record),
      );
    },
    async page(q) {
      const values = auditPageValues(q);
      const rows = await query<AuditRow>(
        pageQuery,
        auditPageNames.map((name) => values[name]),
      );
      return rows.map(toAuditEvent);
    },
    async prune(before) {
      return (await query('DELETE FROM audit_events WHERE made_at < $1 RETURNING 1', [before])).length;
    },
  };
}
