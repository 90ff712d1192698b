/**
 * The repo's jest configuration as `npm run mutate` (stryker.config.json) runs it in Stryker's sandbox.
 * - tests/azure/package.test.ts is left out: it zips the sandbox (which holds no production
 *   node_modules of its own, so `archiver` and the dependency walk fail there) and checks the zip;
 *   it runs no code of src/domain or src/services in-process, so no mutant could be killed by it.
 * - Instrumented code is slower: a test gets 5 minutes instead of 1 (the deep-nesting CLI tests).
 * - MUTATE_TESTS=tests/unit (a folder or file under tests/) limits the run to those tests, for a
 *   quicker run; the score it gives is a lower bound of the whole suite's.
 */
const base = require('./jest.config.js');

const only = process.env.MUTATE_TESTS;

module.exports = {
  ...base,
  ...(only ? { roots: [`<rootDir>/${only}`] } : {}),
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/tests/azure/package\\.test\\.ts$'],
  testTimeout: 300000,
};
