// listAuditEvents: the audit trail (audit.ts), newest first, a page at a time, filtered by key, by a part of
// the admin token's name, by operation and by when. The cursor is the last event's number, opaque to the caller.
import type { AuditEvent as AuditEventView, AuditPage } from '@animal-store/spec/admin';
import type { RequestHandler } from 'express';
import { HttpError } from '../http/http-error.js';
import type { AuditEvent, KeyTerms } from '../store/operator-records.js';
import { type AdminDeps, limitsOf } from './operation.js';

const cursorOf = (event: AuditEvent) => Buffer.from(String(event.id)).toString('base64url');

function positionOf(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  // Only a position this service could have written: an event's number.
  if (/^[1-9][0-9]{0,15}$/.test(text) && Number.isSafeInteger(Number(text))) return Number(text);
  throw new HttpError(400, 'query.cursor is not a cursor this service made; start again without it.');
}

const termsView = (terms: KeyTerms | null) =>
  terms && {
    plan: terms.plan,
    limits: limitsOf(terms.quota),
    label: terms.label,
    customerId: terms.customerId,
    ...(terms.expiresAt !== undefined && { expiresAt: terms.expiresAt }),
    ...(terms.disabled !== undefined && { disabled: terms.disabled }),
  };

const view = (event: AuditEvent): AuditEventView => ({
  ...event,
  operation: event.operation as AuditEventView['operation'],
  before: termsView(event.before),
  after: termsView(event.after),
  reset: event.reset as AuditEventView['reset'],
});

/** A date-time the contract let through, as the trail writes instants (ISO, UTC, milliseconds). */
const instant = (value: unknown) => (typeof value === 'string' ? new Date(value).toISOString() : undefined);

export const listAuditEvents = ({ store }: Pick<AdminDeps, 'store'>): RequestHandler =>
  async function listAuditEvents(req, res) {
    const limit = Number(req.query.limit); // the contract's default filled in by validation
    const page = await store.audit.page({
      keyId: req.query.keyId as string | undefined,
      actor: req.query.actor as string | undefined,
      operation: req.query.operation as string | undefined,
      since: instant(req.query.since),
      until: instant(req.query.until),
      before: typeof req.query.cursor === 'string' ? positionOf(req.query.cursor) : undefined,
      limit: limit + 1,
    });
    const shown = page.slice(0, limit);
    const last = shown.at(-1);
    res.json({
      events: shown.map(view),
      nextCursor: page.length > limit && last ? cursorOf(last) : null,
    } satisfies AuditPage);
  };
