/**
 * One jest run for the whole repository. Tests import the code under test from its TypeScript source
 * (compiled on the fly by swc); workspace packages resolve to their built dist, so `npm test` builds first.
 * Integration tests talk to the real PostgreSQL, RabbitMQ and Redis given by DATABASE_URL, AMQP_URL, REDIS_URL.
 */
module.exports = {
  // jest's node environment with Node's own require beside jest's (tests/support/native.ts).
  testEnvironment: '<rootDir>/tests/support/node-environment.js',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  testMatch: [
    '<rootDir>/packages/*/src/**/*.test.ts',
    '<rootDir>/services/*/src/**/*.test.ts',
    '<rootDir>/services/*/test/**/*.test.ts',
    '<rootDir>/tests/**/*.test.ts',
  ],
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/'],
  globalSetup: '<rootDir>/tests/support/global-setup.js',
  globalTeardown: '<rootDir>/tests/support/global-teardown.js',
  testTimeout: 30_000,
  // Measured on the 2-core machine: the files wait on timers, the network and the servers about 40% of their time, so
  // two workers kept the cores ~75% busy (672 s); three keep them ~95% busy (500 s), and more only add load.
  maxWorkers: 3,
  workerIdleMemoryLimit: '1GB',
};
