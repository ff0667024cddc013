// Throwaway SQLite files (test-support's tempDatabase) go with the process that made them: a full run left
// about 300 folders in the temporary folder, one per file.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('tempDatabase', () => {
  it('gives a path in a folder of its own, removed when the process that asked exits', () => {
    const script = `
      import { existsSync, writeFileSync } from 'node:fs';
      import { tempDatabase } from '@animal-store/test-support';
      const paths = [tempDatabase(), tempDatabase()];
      for (const path of paths) writeFileSync(path, 'a database');
      console.log(JSON.stringify({ paths, there: paths.map((path) => existsSync(path)) }));`;
    const { paths, there } = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: new URL('../..', import.meta.url),
        encoding: 'utf8',
      }),
    ) as { paths: string[]; there: boolean[] };
    expect(there).toEqual([true, true]);
    expect(new Set(paths.map(dirname)).size).toBe(2);
    expect(paths.map((path) => existsSync(dirname(path)))).toEqual([false, false]);
  });
});
