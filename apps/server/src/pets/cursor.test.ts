import { describe, expect, it } from 'vitest';
import { createCursors } from './cursor.js';

const cursors = createCursors('a secret');

describe('createCursors', () => {
  it.each([
    ['the first page of all pets', { afterId: 20, status: null }],
    ['a page of one status', { afterId: 7, status: 'sold' as const }],
    ['a position beyond 2^31', { afterId: 2 ** 40, status: 'pending' as const }],
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
    ['a cursor of another secret', () => createCursors('another').encode({ afterId: 20, status: null })],
  ])('refuses %s', (_, alter) => {
    expect(cursors.decode(alter(cursors.encode({ afterId: 20, status: null })))).toBeUndefined();
  });
});
