import { defineConfig } from 'vitest/config';

// `test`: the guards, spec:diff and the release command on fixtures (pnpm test). `registry`: the whole
// release against a local registry (pnpm test:release: slow, kept out of the README's test command).
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'tools', include: ['test/**/*.test.ts'], testTimeout: 60_000 } },
      {
        test: {
          name: 'registry',
          include: ['test-registry/**/*.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
