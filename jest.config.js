/** Services (Postgres, Temporal, anvil chains) start once per run in globalSetup; tests isolate by data. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/.dev/', '/.temporal/'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  globalSetup: '<rootDir>/test/globalSetup.ts',
  globalTeardown: '<rootDir>/test/globalTeardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
  reporters: ['default', ['<rootDir>/test/summaryReporter.js', {}]],
};
