import type { AuditEvent } from '@animal-store/client/admin';
import { describe, expect, it } from 'vitest';
import {
  addDays,
  auditText,
  everyDay,
  isUtcDay,
  keyState,
  maxRangeDays,
  scaleTop,
  time,
  usageCsv,
} from './format.js';

describe('the console’s arithmetic', () => {
  it('takes a UTC day only as a day of the calendar, YYYY-MM-DD', () => {
    for (const day of ['2026-12-06', '2024-02-29']) expect(isUtcDay(day), day).toBe(true);
    for (const text of ['2027-02-30', '2026-13-01', '2026-12-6', '06.12.2026', '', '2026-12-06T00:00:00Z'])
      expect(isUtcDay(text), text).toBe(false);
  });

  it('walks UTC days across months and years', () => {
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
  });

  it('fills the days the admin API leaves out with zeros, in order', () => {
    const days = everyDay('2026-11-28', '2026-12-01', [
      { date: '2026-11-30', admitted: 3, limited: 1, banned: 0 },
    ]);
    expect(days.map((day) => day.date)).toEqual(['2026-11-28', '2026-11-29', '2026-11-30', '2026-12-01']);
    expect(days.map((day) => day.admitted)).toEqual([0, 0, 3, 0]);
    expect(everyDay('2026-01-01', '2030-01-01', [])).toHaveLength(maxRangeDays);
    expect(everyDay('2026-01-02', '2026-01-01', [])).toEqual([]);
  });

  it('rounds the chart’s top up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 3, 10, 11, 120, 501, 1000].map(scaleTop)).toEqual([1, 1, 5, 10, 20, 200, 1000, 1000]);
  });

  it('shows times in UTC, and none as a dash', () => {
    expect(time('2026-11-23T10:12:00.000Z')).toBe('2026-11-23 10:12:00 UTC');
    expect(time(null)).toBe('—');
  });

  it('writes a range of days as CSV: a header, a line a day, CRLF', () => {
    expect(
      usageCsv([
        { date: '2026-11-26', admitted: 3, limited: 1, banned: 0 },
        { date: '2026-11-27', admitted: 0, limited: 0, banned: 2 },
      ]),
    ).toBe('date,admitted,limited,banned\r\n2026-11-26,3,1,0\r\n2026-11-27,0,0,2\r\n');
  });

  it('says what an audit event changed, field by field', () => {
    const free = {
      plan: 'free',
      limits: { perMinute: 60, perDay: 1000 },
      label: 'Acme',
      customerId: null,
    } as const;
    const event = (e: Partial<AuditEvent>): AuditEvent => ({
      id: 1,
      at: '2026-11-23T10:12:00.000Z',
      actor: { name: 'support', token: '0123456789ab' },
      operation: 'updateKey',
      keyId: '3f2a9c0b1d4e',
      requestId: 'r',
      before: null,
      after: null,
      previousSecretValidUntil: null,
      reset: null,
      ...e,
    });
    expect(auditText(event({ operation: 'createKey', after: free }))).toBe(
      'created on free (60 a minute, 1,000 a day)',
    );
    expect(
      auditText(
        event({
          before: free,
          after: { plan: 'pro', limits: { perMinute: 300, perDay: 10000 }, label: null, customerId: 'cus_1' },
        }),
      ),
    ).toBe(
      'changed plan free → pro; limits 60 a minute, 1,000 a day → 300 a minute, 10,000 a day; label “Acme” → none; customer none → cus_1',
    );
    expect(auditText(event({ before: free, after: free }))).toBe('changed nothing');
    const kept = { ...free, expiresAt: null, disabled: false };
    expect(
      auditText(
        event({ before: kept, after: { ...kept, expiresAt: '2027-01-31T00:00:00.000Z', disabled: true } }),
      ),
    ).toBe('changed expiry never → 2027-01-31 00:00:00 UTC; state enabled → disabled');
    expect(auditText(event({ before: { ...kept, disabled: true }, after: kept }))).toBe(
      'changed state disabled → enabled',
    );
    expect(
      auditText(event({ operation: 'rotateKey', previousSecretValidUntil: '2026-11-24T10:12:00.000Z' })),
    ).toBe('rotated; the old secret worked until 2026-11-24 10:12:00 UTC');
    expect(auditText(event({ operation: 'rotateKey' }))).toBe('rotated; the old secret stopped at once');
    expect(auditText(event({ operation: 'revokeKey' }))).toBe('revoked');
    expect(auditText(event({ operation: 'unbanKey', reset: ['minute', 'day'] }))).toBe(
      'unbanned, and the minute and day started over',
    );
    expect(auditText(event({ operation: 'unbanKey', reset: [] }))).toBe('unbanned');
  });
});

describe('keyState', () => {
  const now = '2026-11-28T12:00:00.000Z';
  const key = { revokedAt: null, disabledAt: null, expiresAt: null };
  it('says revoked, disabled, expired, about to expire (within 7 days) or active, in that order', () => {
    expect(keyState(key, now)).toBe('active');
    expect(keyState({ ...key, expiresAt: '2026-12-31T00:00:00.000Z' }, now)).toBe('active');
    expect(keyState({ ...key, expiresAt: '2026-12-01T09:30:00.000Z' }, now)).toBe(
      'expires 2026-12-01 09:30:00 UTC',
    );
    expect(keyState({ ...key, expiresAt: now }, now)).toBe('expired');
    expect(keyState({ ...key, expiresAt: now, disabledAt: now }, now)).toBe('disabled');
    expect(keyState({ ...key, disabledAt: now, revokedAt: now }, now)).toBe('revoked');
  });
});
