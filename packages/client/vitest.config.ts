import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { testTimeout: 60_000, typecheck: { enabled: true, include: ['src/**/*.test-d.ts'] } },
});
