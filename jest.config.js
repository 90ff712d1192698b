/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testTimeout: 60000,
  // The module the Node worker provides at run time: the embedded stand-in (local/worker/core.ts).
  moduleNameMapper: { '^@azure/functions-core$': '<rootDir>/local/worker/core.ts' },
};
