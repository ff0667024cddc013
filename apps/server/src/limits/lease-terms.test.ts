// The lease's terms as tables: what a process asks of its window for a given pace and what is left, how a
// take measures the pace, and when a refused window is asked again. Pure functions: no store, no clock.
import { describe, expect, it } from 'vitest';
import {
  afterGrant,
  farLeases,
  holdMs,
  leaseCoverMs,
  leaseMs,
  leaseTerms,
  longCoverMs,
  longLeaseMs,
  maxLease,
  measured,
  type Pace,
  recheckAt,
  recheckMs,
  unknownPace,
} from './lease-terms.js';

const pace = (demandPerMs: number, peakPacePerMs?: number): Pace => ({
  grantedAt: 1,
  usedSinceGrant: 0,
  demandPerMs,
  ...(peakPacePerMs === undefined ? {} : { peakPacePerMs }),
});
const short = (want: number) => ({ want, lengthMs: leaseMs, holdMs: want > 1 ? holdMs : 0 });
const long = (want: number) => ({ want, lengthMs: longLeaseMs, holdMs: longLeaseMs + holdMs - leaseMs });

describe('leaseTerms', () => {
  const cases: [string, { left: number; pace: Pace }, ReturnType<typeof leaseTerms>][] = [
    [
      'the first take of a window: one point, used at once, nothing held',
      { left: 1_000, pace: unknownPace() },
      short(1),
    ],
    [
      'a demand but no peak yet (one take in the window): short, a quarter second of the demand',
      { left: 100_000, pace: pace(0.1) },
      short(Math.ceil(0.1 * leaseCoverMs)),
    ],
    [
      'far from the end at the peak pace: long, three seconds of the demand',
      { left: 100_000, pace: pace(0.1, 0.1) },
      long(Math.ceil(0.1 * longCoverMs)),
    ],
    [
      'exactly farLeases long leases left at the peak: still long',
      { left: farLeases * longLeaseMs * 0.1, pace: pace(0.1, 0.1) },
      long(Math.ceil(0.1 * longCoverMs)),
    ],
    [
      'one point fewer: short again, so a refusal elsewhere asks at most holdMs',
      { left: farLeases * longLeaseMs * 0.1 - 1, pace: pace(0.1, 0.1) },
      short(Math.ceil(0.1 * leaseCoverMs)),
    ],
    [
      'a pause lowers the demand, not the peak: short near the end however slow now',
      { left: 1_000, pace: pace(0.001, 1) },
      short(1),
    ],
    ['near the limit: an eighth of what is left at most', { left: 80, pace: pace(1, 1) }, short(10)],
    ['under 16 points left: single points', { left: 15, pace: pace(1, 1) }, short(1)],
    ['nothing left: still one point asked (the store says no)', { left: 0, pace: pace(1, 1) }, short(1)],
    ['a huge demand far from the end: maxLease at most', { left: 1e9, pace: pace(100, 100) }, long(maxLease)],
  ];
  it.each(cases)('%s', (_, given, want) => {
    expect(leaseTerms(given.left, given.pace)).toEqual(want);
  });
});

describe('measured', () => {
  const cases: [string, { pace: Pace; at: number }, number][] = [
    ['before the first grant: no demand known', { pace: unknownPace(), at: 5_000 }, 0],
    [
      'points used since the grant over the time since',
      { pace: { ...pace(0), usedSinceGrant: 50 }, at: 101 },
      0.5,
    ],
    [
      'within the same millisecond: over one millisecond',
      { pace: { ...pace(0), usedSinceGrant: 3 }, at: 1 },
      3,
    ],
  ];
  it.each(cases)('%s', (_, given, want) => {
    expect(measured(given.pace, given.at).demandPerMs).toBe(want);
  });
});

describe('afterGrant', () => {
  const cases: [
    string,
    { pace: Pace; at: number; othersTook: number; sameWindow: boolean },
    number | undefined,
  ][] = [
    [
      'the first grant of the window: no peak yet',
      { pace: unknownPace(), at: 1_000, othersTook: 0, sameWindow: true },
      undefined,
    ],
    [
      'a new window: the peak starts unknown again',
      { pace: pace(1, 5), at: 1_001, othersTook: 0, sameWindow: false },
      undefined,
    ],
    [
      "the others' takes over the time since, plus this process's demand",
      { pace: pace(0.5), at: 1_001, othersTook: 1_000, sameWindow: true },
      1.5,
    ],
    [
      'a lease landing moments after this take reads over a quarter second, not as a rush',
      { pace: pace(0), at: 11, othersTook: 100, sameWindow: true },
      100 / leaseCoverMs,
    ],
    [
      'a slower stretch keeps the fastest seen',
      { pace: pace(0.1, 2), at: 1_001, othersTook: 0, sameWindow: true },
      2,
    ],
    [
      'more points than the window counted (a give-back) never read as a negative pace',
      { pace: pace(0.1), at: 1_001, othersTook: -40, sameWindow: true },
      0.1,
    ],
  ];
  it.each(cases)('%s', (_, given, want) => {
    const after = afterGrant(given.pace, given.at, given.othersTook, given.sameWindow);
    expect(after.peakPacePerMs).toBe(want);
    expect(after).toMatchObject({
      grantedAt: given.at,
      usedSinceGrant: 0,
      demandPerMs: given.pace.demandPerMs,
    });
  });
});

describe('recheckAt', () => {
  const cases: [string, { at: number; heldUntil: number }, number][] = [
    ['nothing held elsewhere: after recheckMs', { at: 10_000, heldUntil: 0 }, 10_000 + recheckMs],
    ['points held elsewhere come back sooner: then', { at: 10_000, heldUntil: 10_400 }, 10_400],
    [
      'held longer than recheckMs: after recheckMs still',
      { at: 10_000, heldUntil: 14_000 },
      10_000 + recheckMs,
    ],
  ];
  it.each(cases)('%s', (_, given, want) => {
    expect(recheckAt(given.at, given.heldUntil)).toBe(want);
  });
});
