// The ratio of this tree against an earlier one, from their rounds (measure.ts).
import { expect, it } from 'vitest';
import { againstRatio } from './measure.js';
import { round } from './rounds.fixture.js';

it('compares the rounds in pairs: the median ratio, and the lowest and highest round', () => {
  const ratio = againstRatio(
    [round(110, 90), round(90, 110), round(100, 100)],
    [round(100, 100), round(100, 100), round(100, 100)],
  );
  expect(ratio).toEqual({ reqPerSec: 1, reqPerSecRange: [0.9, 1.1], cpuUsPerRequest: 1 });
});

it('leaves out a round in which either answered nothing (a starved run), not a ratio of 0 or Infinity', () => {
  const ratio = againstRatio([round(0, Number.NaN), round(120, 80)], [round(100, 100), round(100, 100)]);
  expect(ratio).toEqual({ reqPerSec: 1.2, reqPerSecRange: [1.2, 1.2], cpuUsPerRequest: 0.8 });
  const starvedEarlier = againstRatio(
    [round(120, 80), round(90, 110)],
    [round(0, Number.NaN), round(100, 100)],
  );
  expect(starvedEarlier.reqPerSecRange).toEqual([0.9, 0.9]);
});
