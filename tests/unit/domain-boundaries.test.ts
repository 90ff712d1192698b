/**
 * The domain imports nothing from Azure, does no I/O and depends on nothing outside itself (docs/architecture.md,
 * Layers). ESLint says so too; this test holds even when the lint config changes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const DOMAIN = resolve(__dirname, '../../src/domain');

/** Besides `@azure/*`: the Durable Functions SDK, and OpenTelemetry, which telemetry to Azure Monitor rides on. */
const AZURE_PACKAGES = ['durable-functions', '@opentelemetry'];
const IO_MODULES = [
  'fs',
  'net',
  'http',
  'http2',
  'https',
  'child_process',
  'dns',
  'dgram',
  'tls',
  'worker_threads',
];

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((item) => {
    const path = join(directory, item.name);
    if (item.isDirectory()) return sourceFiles(path);
    return /\.(c|m)?[jt]sx?$/.test(item.name) ? [path] : [];
  });
}

/** Every module a source text refers to: import and export `from`, `import()`, `require()`, `import x = require()`. */
function importsOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
}

/** Why `file` may not import `specifier`, or null when it may. */
function violation(file: string, specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    const target = resolve(dirname(file), specifier);
    const inside = relative(DOMAIN, target);
    const outside = inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside);
    return outside ? `${specifier} is outside src/domain` : null;
  }
  if (specifier.startsWith('@azure/')) return `${specifier} is an Azure SDK`;
  const packageName = specifier.split('/')[0];
  if (AZURE_PACKAGES.includes(packageName)) return `${specifier} is an Azure SDK or telemetry`;
  const nodeModule = specifier.replace(/^node:/, '').split('/')[0];
  if (IO_MODULES.includes(nodeModule)) return `${specifier} does I/O`;
  return null;
}

function violationsIn(file: string, source: string): string[] {
  return importsOf(source).flatMap((specifier) => {
    const why = violation(file, specifier);
    return why === null ? [] : [`${relative(DOMAIN, file)}: ${why}`];
  });
}

describe('the domain layer', () => {
  const files = sourceFiles(DOMAIN);

  it('has its source files where the test looks', () => {
    const names = files.map((file) => relative(DOMAIN, file));
    expect(names).toEqual(
      expect.arrayContaining(['entry.ts', 'digest.ts', 'order.ts', 'saga.ts', 'errors.ts']),
    );
  });

  it('imports nothing from Azure, no Node I/O module and nothing outside src/domain', () => {
    const violations = files.flatMap((file) => violationsIn(file, readFileSync(file, 'utf8')));
    expect(violations).toEqual([]);
  });

  it('does import modules the check can see', () => {
    const imports = files.flatMap((file) => importsOf(readFileSync(file, 'utf8')));
    expect(imports).toEqual(expect.arrayContaining(['node:crypto', './entry']));
  });
});

describe('the boundary check itself', () => {
  const file = join(DOMAIN, 'order.ts');

  it.each([
    "import { CosmosClient } from '@azure/cosmos';",
    "import type { InvocationContext } from '@azure/functions';",
    "import * as df from 'durable-functions';",
    "import { trace } from '@opentelemetry/api';",
    "import { readFileSync } from 'fs';",
    "import { readFile } from 'node:fs/promises';",
    "import fs = require('node:fs');",
    "const net = require('net');",
    "export { request } from 'http';",
    "import https from 'node:https';",
    "import { spawn } from 'child_process';",
    "import { lookup } from 'node:dns';",
    "import { createSocket } from 'dgram';",
    "import { connect } from 'node:tls';",
    "import { Worker } from 'worker_threads';",
    "const io = await import('node:net');",
    "import type { StorePort } from '../services/ports';",
    "import { send } from '../adapters/service-bus';",
    "import '../../package.json';",
    "import { x } from './../local/cli';",
  ])('flags %s', (source) => {
    expect(violationsIn(file, source)).toHaveLength(1);
  });

  it.each([
    "import { createHash } from 'node:crypto';",
    "import { createHash } from 'crypto';",
    "import { validateEntry } from './entry';",
    "import { x } from './nested/module';",
    "export type { Entry } from './entry';",
    'const note = \'import fs from "fs" in a string is no import\';',
  ])('lets %s through', (source) => {
    expect(violationsIn(file, source)).toEqual([]);
  });
});
