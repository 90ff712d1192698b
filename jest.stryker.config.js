/**
 * The repo's jest configuration as `npm run mutate` (stryker.config.json) runs it in Stryker's sandbox.
 * - tests/azure/package.test.ts is left out: it zips the sandbox (which holds no production
 *   node_modules of its own, so `archiver` and the dependency walk fail there) and checks the zip;
 *   it runs no code of src/domain or src/services in-process, so no mutant could be killed by it.
 * - Instrumented code is slower: a test gets 5 minutes instead of 1 (the deep-nesting CLI tests).
 * - MUTATE_TESTS limits the run to some tests, for a quicker run: a comma-separated list of folders
 *   (`tests/unit`) or test files (`tests/unit/entry.test.ts`) under tests/. Jest loads every test file
 *   it is given once per mutant (the test-name filter of per-test coverage only skips tests inside a
 *   file), so fewer files make each mutant cheaper. Fewer tests can only kill fewer mutants: the score
 *   such a run gives is a lower bound of the whole suite's.
 */
const base = require('./jest.config.js');

const only = (process.env.MUTATE_TESTS ?? '')
  .split(',')
  .map((part) => part.trim().replace(/\/+$/, ''))
  .filter((part) => part !== '');

const selection =
  only.length === 0
    ? {}
    : {
        testMatch: only.map((part) =>
          part.endsWith('.ts') ? `<rootDir>/${part}` : `<rootDir>/${part}/**/*.test.ts`,
        ),
      };

module.exports = {
  ...base,
  ...selection,
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/tests/azure/package\\.test\\.ts$'],
  testTimeout: 300000,
};
