import { describe, expect, it } from 'vitest';
import { createCursors, issuedSignatures } from './cursor.js';

const cursors = createCursors('a secret');

describe('createCursors', () => {
  it.each([
    ['the first page of all pets', { afterId: 20, filter: {} }],
    ['a page of one status', { afterId: 7, filter: { status: 'sold' as const } }],
    ['a position beyond 2^31', { afterId: 2 ** 40, filter: { status: 'pending' as const } }],
  ])('round-trips %s', (_, position) => {
    expect(cursors.decode(cursors.encode(position))).toEqual(position);
  });

  it.each([
    ['an empty string', () => ''],
    ['no signature', (c: string) => c.split('.')[0] as string],
    [
      'an altered position',
      (c: string) => `${Buffer.from('[21,null]').toString('base64url')}.${c.split('.')[1]}`,
    ],
    ['an altered signature', (c: string) => `${c.slice(0, -1)}${c.endsWith('A') ? 'B' : 'A'}`],
    ['a cursor of another secret', () => createCursors('another').encode({ afterId: 20, filter: {} })],
  ])('refuses %s', (_, alter) => {
    expect(cursors.decode(alter(cursors.encode({ afterId: 20, filter: {} })))).toBeUndefined();
  });
});

it('keeps the form of every release before: [afterId, status or null]', () => {
  const payload = (c: string) => Buffer.from(c.split('.')[0] as string, 'base64url').toString();
  expect(payload(cursors.encode({ afterId: 3, filter: {} }))).toBe('[3,null]');
  expect(payload(cursors.encode({ afterId: 3, filter: { status: 'sold' } }))).toBe('[3,"sold"]');
});

describe('issuedSignatures', () => {
  const counting = () => {
    const signed: string[] = [];
    const sign = (payload: string) => {
      signed.push(payload);
      return `sig(${payload})`;
    };
    return { signed, sign };
  };

  it('signs a cursor it issues once, however often it is issued', () => {
    const { signed, sign } = counting();
    const signatures = issuedSignatures(sign);
    expect([signatures.issue('a'), signatures.issue('a'), signatures.expected('a')]).toEqual([
      'sig(a)',
      'sig(a)',
      'sig(a)',
    ]);
    expect(signed).toEqual(['a']);
  });

  it('checks a payload it did not issue afresh each time, and never remembers it', () => {
    const { signed, sign } = counting();
    const signatures = issuedSignatures(sign, 2);
    signatures.issue('ours');
    for (const sent of ['x', 'y', 'x']) expect(signatures.expected(sent)).toBe(`sig(${sent})`);
    signatures.issue('ours');
    expect(signed).toEqual(['ours', 'x', 'y', 'x']);
  });

  it('remembers at most its bound, forgetting the least recently issued', () => {
    const { signed, sign } = counting();
    const signatures = issuedSignatures(sign, 2);
    for (const payload of ['a', 'b', 'a', 'c', 'a', 'b']) signatures.issue(payload);
    expect(signed).toEqual(['a', 'b', 'c', 'b']);
  });
});
