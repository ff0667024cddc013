// Throwaway SQLite files (test-support's tempDatabase) go with the process that made them: a full run left
// about 300 folders in the temporary folder, one per file, and then, when only an exit removed them, about
// 250 still (vitest stops its workers with SIGTERM).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
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

  it('removes them too when the process is stopped with SIGTERM, as vitest stops a worker, and still ends by the signal', async () => {
    const script = `
      import { writeFileSync } from 'node:fs';
      import { tempDatabase } from '@animal-store/test-support';
      const path = tempDatabase();
      writeFileSync(path, 'a database');
      console.log(path);
      setInterval(() => {}, 1_000); // a worker waiting for its next file`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: new URL('../..', import.meta.url),
    });
    const [path] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    expect(existsSync(path)).toBe(true);
    child.kill('SIGTERM');
    const [code, signal] = await once(child, 'exit');
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
    expect(existsSync(dirname(path))).toBe(false);
  });
});
