import { describe, expect, it } from 'vitest';
import { ownEnginesFirst } from './sequencer.js';

const spec = (project: string, path: string) => ({
  moduleId: `/repo/apps/server/${path}`,
  project: { name: project },
});

describe('the order the suites start in', () => {
  it("starts each project's own-engines suites first among its files, the rest in vitest's order", () => {
    const files = [
      spec('postgres', 'test/every-engine/pets.test.ts'),
      spec('postgres', 'test/every-topology/pools.test.ts'),
      spec('sqlite', 'test/sqlite-only/process.test.ts'),
      spec('sqlite', 'test/every-engine/pets.test.ts'),
      spec('sqlite', 'test/own-engines/alert-rules.test.ts'),
      spec('sqlite', 'test/sqlite-only/workers.test.ts'),
      spec('sqlite', 'test/own-engines/rolling-upgrade.test.ts'),
      spec('unit', 'src/plans.test.ts'),
    ];
    expect(ownEnginesFirst(files).map((f) => `${f.project.name} ${f.moduleId.slice(18)}`)).toEqual([
      'postgres test/every-engine/pets.test.ts',
      'postgres test/every-topology/pools.test.ts',
      'sqlite test/own-engines/alert-rules.test.ts',
      'sqlite test/own-engines/rolling-upgrade.test.ts',
      'sqlite test/sqlite-only/process.test.ts',
      'sqlite test/every-engine/pets.test.ts',
      'sqlite test/sqlite-only/workers.test.ts',
      'unit src/plans.test.ts',
    ]);
  });
});
