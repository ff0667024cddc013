// The console's tests, as three projects: its own modules (src/), and the console in headless Chromium
// against the built server (test/) on SQLite and on PostgreSQL + Redis (TEST_BACKEND, read by
// test/support/server.ts). An engine that cannot be reached skips its project with one line saying how to
// enable it; under CI it is a failure instead (testEngines). Chromium missing: the same (toolFor).
import { processSuiteTimeouts, testEngines } from '@animal-store/test-support';
import { defineConfig } from 'vitest/config';

export default defineConfig(async () => {
  const { postgres, redis } = await testEngines();
  const browser = (name: string) => ({
    extends: true as const,
    test: { name, include: ['test/**/*.test.ts'], env: { TEST_BACKEND: name } },
  });
  return {
    test: {
      // A server, a browser and Vite per file: two files at a time on two cores.
      maxWorkers: 2,
      ...processSuiteTimeouts,
      projects: [
        { extends: true as const, test: { name: 'unit', include: ['src/**/*.test.ts'] } },
        browser('sqlite'),
        ...(postgres && redis ? [browser('postgres+redis')] : []),
      ],
    },
  };
});
