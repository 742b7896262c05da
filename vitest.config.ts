import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The framework projects are built by the tests, not tested themselves.
    exclude: ['**/node_modules/**', 'test/frameworks/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
})
