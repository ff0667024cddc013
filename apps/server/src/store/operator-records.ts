// What the store keeps for operators, beside the pets and keys (store.ts): each key's requests per UTC day
// as the rate limiter decided them (UsageStore), and the audit trail of the changes made through the admin
// API (AuditStore).
import type { Plan, Quota } from '../plans.js';

/**
 * One key's requests on one UTC day (`YYYY-MM-DD`), as the rate limiter decided them: what the meter adds
 * up and the store keeps (the admin contract's DayUsage is its answer, summed over instances).
 */
export type KeyDayCounts = { keyId: string; day: string; admitted: number; limited: number; banned: number };

export interface UsageStore {
  /** Adds the counts to each key's day (creating it). */
  add(counts: KeyDayCounts[]): Promise<void>;
  /** The key's days from `from` to `to` (both included, `YYYY-MM-DD`), in order; days without requests are absent. */
  days(keyId: string, from: string, to: string): Promise<KeyDayCounts[]>;
  /** Deletes the days before `before` (`YYYY-MM-DD`). */
  prune(before: string): Promise<number>;
}

/** A key's terms as an admin change found or left them (the audit trail's before and after). */
export type KeyTerms = {
  plan: Plan;
  quota: Quota;
  label: string | null;
  customerId: string | null;
  /** Absent from events stored before keys had an expiry and a disable. */
  expiresAt?: string | null;
  disabled?: boolean;
};

/** One change made through the admin API, as the audit trail stores it. */
export type AuditRecord = {
  /** When the change was made (ISO). */
  at: string;
  /** The admin token's name in ADMIN_TOKENS, and its fingerprint. */
  actor: { name: string; token: string };
  operation: string;
  keyId: string;
  requestId: string;
  before: KeyTerms | null;
  after: KeyTerms | null;
  previousSecretValidUntil: string | null;
  reset: string[] | null;
};
/** An audit record as stored: its number, higher for later records. */
export type AuditEvent = AuditRecord & { id: number };

/** Which audit events a page holds: those that match every filter given, numbered below `before`. */
export type AuditFilter = {
  keyId?: string | undefined;
  /** A part of the token's name, case ignored. */
  actor?: string | undefined;
  operation?: string | undefined;
  /** ISO instants: made at or after `since`, before `until`. */
  since?: string | undefined;
  until?: string | undefined;
};

export interface AuditStore {
  add(record: AuditRecord): Promise<void>;
  /** Up to `limit` events, newest first, numbered below `before` (when given), that pass the filter. */
  page(filter: AuditFilter & { before?: number | undefined; limit: number }): Promise<AuditEvent[]>;
  /** Deletes the events made before `before` (ISO). */
  prune(before: string): Promise<number>;
}
