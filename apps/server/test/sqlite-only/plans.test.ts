import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@animal-store/spec/files';
import { describe, expect, it } from 'vitest';
import { planQuotas } from '../../src/plans.js';

// The plan table lives in src/plans.ts; the contract and the README repeat it for people.
const rows = (text: string) =>
  Object.fromEntries(
    [...text.matchAll(/^\| *(free|pro|business) *\| *([\d,]+) *\| *([\d,]+) *\|/gim)].map((m) => [
      (m[1] as string).toLowerCase(),
      { perMinute: Number(m[2]?.replaceAll(',', '')), perDay: Number(m[3]?.replaceAll(',', '')) },
    ]),
  );

describe('the plan table', () => {
  it.each([
    [
      'the contract',
      (JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as { info: { description: string } }).info
        .description,
    ],
    ['the README', readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8')],
  ])('matches %s', (_, text) => {
    expect(rows(text)).toEqual(planQuotas);
  });
});
