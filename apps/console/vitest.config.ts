// The console's tests, as three projects: its own modules (src/), and the console in headless Chromium
// against the built server (test/) on SQLite and on PostgreSQL + Redis (TEST_BACKEND, read by
// test/support/server.ts). An engine that cannot be reached skips its project with one line saying how to
// enable it; under CI it is a failure instead (testEngines). Chromium missing: the same (toolFor).
import { processSuiteTimeouts, testEngines } from '@animal-store/test-support';
import { defineConfig } from 'vitest/config';

export default defineConfig(async () => {
  const { postgres, redis } = await testEngines();
  const browser = (name: string, exclude: string[] = []) => ({
    extends: true as const,
    test: { name, include: ['test/**/*.test.ts'], exclude, env: { TEST_BACKEND: name } },
  });
  return {
    test: {
      // A server, a browser and Vite per file: two files at a time on two cores.
      maxWorkers: 2,
      ...processSuiteTimeouts,
      projects: [
        { extends: true as const, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
        browser('sqlite'),
        // The dev loop is Vite's, the same on every engine: run once. Two Vite dev servers at a time share
        // the console's dependency cache (node_modules/.vite), and one's rewrite of it broke the other's page
        // in a CI run.
        ...(postgres && redis ? [browser('postgres+redis', ['test/dev-loop.test.ts'])] : []),
      ],
    },
  };
});
