import { defineConfig } from 'vitest/config';

// The examples share process.env: their files and suites run one after another.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], fileParallelism: false, sequence: { concurrent: false }, testTimeout: 600_000 },
});
