// The audit trail on SQLite: one row per admin change, numbered by the table (AUTOINCREMENT: a number is
// never reused, so a cursor never skips an event written later).
import {
  type AuditRow,
  auditColumns,
  auditPageQuery,
  auditPageValues,
  auditValues,
  toAuditEvent,
} from '../audit-query.js';
import type { AuditStore } from '../operator-records.js';
import type { Db } from './database.js';

export function createSqliteAuditStore(db: Db): AuditStore {
  const add = db.prepare(
    `INSERT INTO audit_events (${auditColumns}) VALUES (${auditColumns.replace(/\w+/g, '?')})`,
  );
  const page = db.prepare<Record<string, unknown>, AuditRow>(auditPageQuery((name) => `@${name}`));
  const prune = db.prepare<[string]>('DELETE FROM audit_events WHERE made_at < ?');
  return {
    async add(record) {
      add.run(...auditValues(record));
    },
    async page(query) {
      return page.all(auditPageValues(query)).map(toAuditEvent);
    },
    async prune(before) {
      return prune.run(before).changes;
    },
  };
}
