// The requests the bench drives every contestant with, a scenario at a time (each the same for all).
import type { Request } from './measure.js';

const all: { name: string; requests: Request[] }[] = [
  { name: 'GET /v1/pets?limit=20', requests: [{ method: 'GET', path: '/v1/pets?limit=20' }] },
  {
    name: 'GET /v1/pets?limit=100&status=available',
    requests: [{ method: 'GET', path: '/v1/pets?limit=100&status=available' }],
  },
  {
    name: 'POST /v1/pets',
    requests: [{ method: 'POST', path: '/v1/pets', body: JSON.stringify({ name: 'Bench', categoryId: 1 }) }],
  },
  { name: 'GET /v1/pets/{id}', requests: [{ method: 'GET', path: '/v1/pets/500' }] },
  {
    name: '20/80 POST/list mix',
    requests: [
      { method: 'POST', path: '/v1/pets', body: JSON.stringify({ name: 'Mix', categoryId: 1 }) },
      ...Array.from({ length: 4 }, () => ({ method: 'GET' as const, path: '/v1/pets?limit=20' })),
    ],
  },
];

/** The scenarios whose name contains one of `only` (--scenario), or every one. */
export const scenarios = (only: string[]) =>
  all.filter((s) => only.length === 0 || only.some((o) => s.name.includes(o)));
