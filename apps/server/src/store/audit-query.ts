// The audit trail on both engines: its row (one column per field; before, after and reset as JSON text),
// and listAuditEvents' query (the filters as one condition, newest first below a position), each engine
// naming its parameters.
import { plain } from './key-query.js';
import type { AuditEvent, AuditFilter, AuditRecord } from './operator-records.js';
import type { Integer } from './rows.js';

export type AuditRow = {
  id: Integer;
  made_at: string;
  actor_name: string;
  actor_token: string;
  operation: string;
  key_id: string;
  request_id: string;
  terms_before: string | null;
  terms_after: string | null;
  previous_secret_valid_until: string | null;
  reset_windows: string | null;
};

/** The columns a record is written to, in the order `auditValues` gives their values. */
export const auditColumns =
  'made_at, actor_name, actor_token, operation, key_id, request_id, terms_before, terms_after, previous_secret_valid_until, reset_windows';

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

export const auditValues = (r: AuditRecord) => [
  r.at,
  r.actor.name,
  r.actor.token,
  r.operation,
  r.keyId,
  r.requestId,
  json(r.before),
  json(r.after),
  r.previousSecretValidUntil,
  json(r.reset),
];

const parsed = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

export const toAuditEvent = (row: AuditRow): AuditEvent => ({
  id: Number(row.id),
  at: row.made_at,
  actor: { name: row.actor_name, token: row.actor_token },
  operation: row.operation,
  keyId: row.key_id,
  requestId: row.request_id,
  before: parsed(row.terms_before),
  after: parsed(row.terms_after),
  previousSecretValidUntil: row.previous_secret_valid_until,
  reset: parsed(row.reset_windows),
});

/** A page's values by name: the filters (null where not given), the position, the limit. */
export const auditPageValues = (query: AuditFilter & { before?: number | undefined; limit: number }) => ({
  keyId: query.keyId ?? null,
  // A part of the name; token names are ASCII (config.ts), so every engine's lower() folds them alike.
  actor: query.actor === undefined ? null : `%${plain(query.actor.toLowerCase())}%`,
  operation: query.operation ?? null,
  since: query.since ?? null,
  until: query.until ?? null,
  before: query.before ?? Number.MAX_SAFE_INTEGER,
  limit: query.limit,
});
type AuditPageName = keyof ReturnType<typeof auditPageValues>;
/** Every value's name, in one order (an engine with numbered parameters numbers them in it). */
export const auditPageNames: readonly AuditPageName[] = [
  'keyId',
  'actor',
  'operation',
  'since',
  'until',
  'before',
  'limit',
];

/** The page's statement, given how the engine names each value. */
export function auditPageQuery(at: (name: AuditPageName) => string): string {
  const [keyId, actor, operation, since, until, before, limit] = auditPageNames.map(at);
  return `SELECT * FROM audit_events
    WHERE (${keyId} IS NULL OR key_id = ${keyId})
      AND (${actor} IS NULL OR lower(actor_name) LIKE ${actor} ESCAPE '\\')
      AND (${operation} IS NULL OR operation = ${operation})
      AND (${since} IS NULL OR made_at >= ${since}) AND (${until} IS NULL OR made_at < ${until})
      AND id < ${before}
    ORDER BY id DESC LIMIT ${limit}`;
}
