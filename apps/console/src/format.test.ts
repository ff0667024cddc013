import { describe, expect, it } from 'vitest';
import { addDays, everyDay, maxRangeDays, scaleTop, time, usageCsv } from './format.js';

describe('the console’s arithmetic', () => {
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
});
