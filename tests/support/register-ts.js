/**
 * Lets a child `node` process run the TypeScript sources directly (`node -r tests/support/register-ts.js
 * local/cli/start.ts`), so that a test can run a CLI as its own process, with its output redirected,
 * without building `dist/` first. Each file is transpiled on its own by the TypeScript compiler.
 */
'use strict';
/* global require */
/* eslint-disable @typescript-eslint/no-require-imports -- a plain CommonJS preload, run by node before any TypeScript */
const ts = require('typescript');
const { readFileSync } = require('node:fs');

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      sourceMap: false,
    },
  });
  module._compile(outputText, filename);
};
