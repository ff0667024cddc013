import { defineConfig } from 'vitest/config';

// `tools`: the guards, spec:diff and the release command on fixtures (pnpm test). `slow`: rehearsals on a
// scratch copy of the tree, the whole release against a local registry and the contributor's recipes
// (pnpm test:release: minutes each, kept out of the README's test command; .ci/run runs them).
// The timeouts only catch a hang: a `tools` test runs redocly and git several times (seconds alone), and
// beside the whole suite and two busy cores one took over 60 s (#57's rehearsal under load).
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'tools', include: ['test/**/*.test.ts'], testTimeout: 300_000 } },
      {
        test: {
          name: 'slow',
          include: ['test-slow/**/*.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
