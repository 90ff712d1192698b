/**
 * The Bicep and the code must describe the same app: the settings the code reads are the settings
 * the Function App gets, the queues and the container are the ones of docs/messages.md and docs/architecture.md decision 3, and
 * no key or connection string is anywhere, and the Node version deployed is one the code supports;
 * the operations workbook is deployed from its JSON in bicep/workbooks, and every alert reaches the
 * operators and has its runbook in docs/operations.md.
 * The real compiler checks the Bicep itself (tests/contract/bicep-compiler.test.ts); these checks
 * are what it cannot know. Each is a small function over the .bicep text; the second half of the
 * file feeds the checks copies changed on one side only and proves that each one fails.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { SETTING } from '../../src/adapters/settings';
import { QUEUE, QUEUE_FLAGS } from '../../src/services/queues';
import { ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH } from '../../src/services/order-documents';
import {
  DOWNSTREAM_CONTAINER,
  DOWNSTREAM_PARTITION_KEY_PATH,
  INVENTORY_CONTAINER,
  INVENTORY_PARTITION_KEY_PATH,
} from '../../src/adapters/downstream';
import { includedPaths, queriedFieldsOf, uniqueKeysOf } from '../../src/adapters/indexing-policy';
import { partitionKeyField } from '../../src/adapters/document-rules';
import {
  OPERATIONS_CONTAINER,
  OPERATIONS_PARTITION_KEY_PATH,
} from '../../src/services/operations/operations-journal';

const ROOT = join(__dirname, '..', '..');
const BICEP_DIR = join(ROOT, 'bicep');

/** What docs/messages.md says of each queue; a flag it leaves open is not checked. */
interface QueueContract {
  requiresSession: boolean;
  requiresDuplicateDetection?: boolean;
}

const QUEUE_CONTRACT: Readonly<Record<string, QueueContract>> = {
  [QUEUE.ledger]: { requiresSession: true, requiresDuplicateDetection: true },
  [QUEUE.orderTransactions]: { requiresSession: true, requiresDuplicateDetection: true },
  [QUEUE.parked]: { requiresSession: false, requiresDuplicateDetection: true },
};

/** Settings the Functions runtime reads for itself, allowed besides the code's own. */
function isRuntimeSetting(name: string): boolean {
  return (
    name.startsWith('AzureWebJobsStorage__') ||
    [
      'FUNCTIONS_EXTENSION_VERSION',
      'ServiceBusConnection__credential',
      'ServiceBusConnection__clientId',
      'APPLICATIONINSIGHTS_AUTHENTICATION_STRING',
    ].includes(name)
  );
}

/** local.settings.json also names the worker and may point host storage at a connection string (Azurite). */
function isLocalRuntimeSetting(name: string): boolean {
  return isRuntimeSetting(name) || name === 'FUNCTIONS_WORKER_RUNTIME' || name === 'AzureWebJobsStorage';
}

// ---------------------------------------------------------------------------------------------
// Reading Bicep text

interface BicepFile {
  path: string;
  text: string;
}

const CODE = 0;
const STRING = 1;
const COMMENT = 2;

/**
 * Classifies every character as code, string literal or comment, following Bicep's lexical rules:
 * `'...'` with `\` escapes and `${...}` interpolations (code, possibly holding strings), `'''...'''`
 * verbatim strings, `//` and `/* *\/` comments.
 */
function classify(text: string): Uint8Array {
  const kind = new Uint8Array(text.length);
  // Each entry is an open interpolation's brace depth; empty means top-level code.
  const interpolations: number[] = [];
  let inString = false;
  let i = 0;
  const mark = (from: number, to: number, k: number) => kind.fill(k, from, Math.min(to, text.length));
  while (i < text.length) {
    if (inString) {
      if (text[i] === '\\') {
        mark(i, i + 2, STRING);
        i += 2;
      } else if (text.startsWith('${', i)) {
        interpolations.push(0);
        inString = false;
        i += 2;
      } else {
        mark(i, i + 1, STRING);
        if (text[i] === "'") inString = false;
        i += 1;
      }
    } else if (text.startsWith("'''", i)) {
      const end = text.indexOf("'''", i + 3);
      const stop = end === -1 ? text.length : end + 3;
      mark(i, stop, STRING);
      i = stop;
    } else if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      mark(i, stop, COMMENT);
      i = stop;
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      mark(i, stop, COMMENT);
      i = stop;
    } else if (text[i] === "'") {
      mark(i, i + 1, STRING);
      inString = true;
      i += 1;
    } else {
      const depth = interpolations.length;
      if (depth > 0 && text[i] === '{') interpolations[depth - 1] += 1;
      if (depth > 0 && text[i] === '}') {
        if (interpolations[depth - 1] === 0) {
          interpolations.pop();
          inString = true;
        } else {
          interpolations[depth - 1] -= 1;
        }
      }
      i += 1;
    }
  }
  return kind;
}

/** The text with comments blanked out (same length, so positions still line up). */
function stripComments(text: string): string {
  const kind = classify(text);
  let result = '';
  for (let i = 0; i < text.length; i += 1) {
    result += kind[i] === COMMENT && text[i] !== '\n' ? ' ' : text[i];
  }
  return result;
}

/** Index of the bracket closing the one at `open` (`{` or `[`), ignoring strings and comments. */
function closingBracket(text: string, open: number): number {
  const kind = classify(text);
  const opener = text[open];
  const closer = opener === '{' ? '}' : ']';
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    if (kind[i] !== CODE) continue;
    if (text[i] === opener) depth += 1;
    if (text[i] === closer) depth -= 1;
    if (depth === 0) return i;
  }
  throw new Error(`unbalanced ${opener} at offset ${open}`);
}

interface ResourceBlock {
  file: string;
  symbol: string;
  type: string;
  existing: boolean;
  /** From the opening `{` to its closing `}`, comments blanked. */
  body: string;
}

/** Every `resource` declaration of the files, with its body. */
function resourceBlocks(files: readonly BicepFile[]): ResourceBlock[] {
  const blocks: ResourceBlock[] = [];
  for (const file of files) {
    const text = stripComments(file.text);
    const kind = classify(text);
    const header = /\bresource\s+(\w+)\s+'([^'@]+)@[^']*'/g;
    for (let match = header.exec(text); match !== null; match = header.exec(text)) {
      if (kind[match.index] !== CODE) continue;
      const open = text.indexOf('{', match.index + match[0].length);
      const between = text.slice(match.index + match[0].length, open);
      blocks.push({
        file: file.path,
        symbol: match[1],
        type: match[2],
        existing: /\bexisting\b/.test(between),
        body: text.slice(open, closingBracket(text, open) + 1),
      });
    }
  }
  return blocks;
}

/** Resources of one type that the files declare (not `existing` references). */
function declared(files: readonly BicepFile[], type: string): ResourceBlock[] {
  return resourceBlocks(files).filter(
    (block) => block.type.toLowerCase() === type.toLowerCase() && !block.existing,
  );
}

/** The raw text of the first `key: value` in a body (the key matched case-insensitively). */
function property(body: string, key: string): string | undefined {
  const match = new RegExp(`(?:^|[\\s{,])${key}\\s*:\\s*([^\\n]*)`, 'i').exec(body);
  return match?.[1].trim();
}

function booleanProperty(body: string, key: string): boolean | undefined {
  const value = property(body, key);
  return value === 'true' ? true : value === 'false' ? false : undefined;
}

/** A property whose value is a string literal, e.g. `name: 'ledger'`; undefined for an expression. */
function literalProperty(body: string, key: string): string | undefined {
  return /^'([^'$]*)'$/.exec(property(body, key) ?? '')?.[1];
}

/** The string literals of the array that follows `key:` in a body. */
function arrayOfLiterals(body: string, key: string): string[] | undefined {
  const match = new RegExp(`(?:^|[\\s{,])${key}\\s*:\\s*\\[`, 'i').exec(body);
  if (match === null) return undefined;
  const open = match.index + match[0].length - 1;
  const items = body.slice(open + 1, closingBracket(body, open));
  return [...items.matchAll(/'([^']*)'/g)].map((item) => item[1]);
}

// ---------------------------------------------------------------------------------------------
// The checks: each returns the problems it finds, an empty list when all is well.

/** (a) The Function App's app settings are exactly the code's settings plus the runtime's own. */
function checkAppSettings(files: readonly BicepFile[], settingNames: readonly string[]): string[] {
  const sites = declared(files, 'Microsoft.Web/sites');
  if (sites.length !== 1) return [`expected one Microsoft.Web/sites, found ${sites.length}`];
  const body = sites[0].body;
  const match = /\bappSettings\s*:\s*\[/.exec(body);
  if (match === null) return ['the Function App has no siteConfig.appSettings array'];
  const open = match.index + match[0].length - 1;
  const entries = body.slice(open + 1, closingBracket(body, open));
  const given = [...entries.matchAll(/\bname\s*:\s*'([^']+)'/g)].map((entry) => entry[1]);
  const problems: string[] = [];
  for (const name of settingNames) {
    if (!given.includes(name))
      problems.push(`app setting ${name} is read by the code but not set in the Bicep`);
  }
  for (const name of given) {
    if (!settingNames.includes(name) && !isRuntimeSetting(name)) {
      problems.push(`app setting ${name} is set in the Bicep but read by neither the code nor the runtime`);
    }
  }
  for (const name of new Set(given)) {
    if (given.filter((other) => other === name).length > 1) problems.push(`app setting ${name} is set twice`);
  }
  return problems;
}

/** (b) Every queue of the code exists with the flags of docs/messages.md, and none is partitioned. */
function checkQueues(
  files: readonly BicepFile[],
  contract: Readonly<Record<string, QueueContract>>,
  queueNames: readonly string[],
): string[] {
  const problems: string[] = [];
  const queues = new Map<string, string>();
  for (const block of declared(files, 'Microsoft.ServiceBus/namespaces/queues')) {
    queues.set(literalProperty(block.body, 'name') ?? `<${block.symbol}>`, block.body);
  }
  for (const name of queueNames) {
    const expected = contract[name];
    if (expected === undefined)
      problems.push(`queue ${name} has no entry in the contract table of this test`);
    const body = queues.get(name);
    if (body === undefined) {
      problems.push(`queue ${name} is used by the code but not declared in the Bicep`);
      continue;
    }
    const session = booleanProperty(body, 'requiresSession') ?? false;
    if (expected !== undefined && session !== expected.requiresSession) {
      problems.push(
        `queue ${name}: requiresSession is ${session}, docs/messages.md says ${expected.requiresSession}`,
      );
    }
    const duplicates = booleanProperty(body, 'requiresDuplicateDetection') ?? false;
    if (
      expected?.requiresDuplicateDetection !== undefined &&
      duplicates !== expected.requiresDuplicateDetection
    ) {
      problems.push(
        `queue ${name}: requiresDuplicateDetection is ${duplicates}, docs/messages.md says ${expected.requiresDuplicateDetection}`,
      );
    }
    if (booleanProperty(body, 'enablePartitioning') === true) {
      problems.push(`queue ${name} is partitioned: the sender's multi-session batches would be refused`);
    }
  }
  for (const name of queues.keys()) {
    if (!queueNames.includes(name))
      problems.push(`queue ${name} is declared in the Bicep but unknown to the code`);
  }
  return problems;
}

/** (c) The container the code writes to is partitioned by its key. */
function checkOrdersContainer(
  files: readonly BicepFile[],
  containerName: string,
  partitionKeyPath: string,
): string[] {
  const container = declared(files, 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers').find(
    (block) => literalProperty(block.body, 'name') === containerName,
  );
  if (container === undefined) return [`container ${containerName} is not declared in the Bicep`];
  const problems: string[] = [];
  const paths = arrayOfLiterals(container.body, 'paths');
  if (paths === undefined || paths.length !== 1 || paths[0] !== partitionKeyPath) {
    problems.push(
      `container ${containerName}: partition key is ${JSON.stringify(paths)}, the code uses ${partitionKeyPath}`,
    );
  }
  return problems;
}

/**
 * (i) A container indexes exactly the paths the code queries (src/adapters/indexing-policy.ts):
 * `/*` excluded, its partition key and its queried fields included, consistent indexing.
 */
function checkIndexingPolicy(
  files: readonly BicepFile[],
  containerName: string,
  partitionKeyPath: string,
  queried: readonly string[],
): string[] {
  const container = declared(files, 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers').find(
    (block) => literalProperty(block.body, 'name') === containerName,
  );
  if (container === undefined) return [`container ${containerName} is not declared in the Bicep`];
  const match = /\bindexingPolicy\s*:\s*\{/.exec(container.body);
  if (match === null) return [`container ${containerName} has no indexing policy: every path is indexed`];
  const open = match.index + match[0].length - 1;
  const policy = container.body.slice(open, closingBracket(container.body, open) + 1);
  const problems: string[] = [];
  if (literalProperty(policy, 'indexingMode') !== 'consistent') {
    problems.push(`container ${containerName}: indexingMode is not 'consistent'`);
  }
  const excluded = arrayOfLiterals(policy, 'excludedPaths') ?? [];
  if (!excluded.includes('/*')) {
    problems.push(`container ${containerName}: the indexing policy does not exclude /*`);
  }
  const included = arrayOfLiterals(policy, 'includedPaths') ?? [];
  const expected = includedPaths(partitionKeyField(partitionKeyPath), queried);
  for (const path of expected) {
    if (!included.includes(path)) {
      problems.push(`container ${containerName}: ${path} is queried by the code but not indexed`);
    }
  }
  for (const path of included) {
    if (!expected.includes(path)) {
      problems.push(`container ${containerName}: ${path} is indexed but the code does not query it`);
    }
  }
  return problems;
}

/**
 * (i) A container's unique keys are exactly the code's (src/adapters/indexing-policy.ts, UNIQUE_KEYS):
 * a key the code relies on but the Bicep does not declare would leave two writers of one slot both
 * committing on Azure while every embedded test passes.
 */
function checkUniqueKeys(
  files: readonly BicepFile[],
  containerName: string,
  unique: readonly string[],
): string[] {
  const container = declared(files, 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers').find(
    (block) => literalProperty(block.body, 'name') === containerName,
  );
  if (container === undefined) return [`container ${containerName} is not declared in the Bicep`];
  const match = /\buniqueKeyPolicy\s*:\s*\{/.exec(container.body);
  const declaredPaths: string[] = [];
  if (match !== null) {
    const open = match.index + match[0].length - 1;
    const policy = container.body.slice(open, closingBracket(container.body, open) + 1);
    for (const paths of policy.matchAll(/\bpaths\s*:\s*\[([^\]]*)\]/g))
      declaredPaths.push(...[...paths[1].matchAll(/'([^']*)'/g)].map((literal) => literal[1]));
  }
  const expected = unique.map((field) => `/${field}`);
  return [
    ...expected
      .filter((path) => !declaredPaths.includes(path))
      .map((path) => `container ${containerName}: ${path} is a unique key of the code but not of the Bicep`),
    ...declaredPaths
      .filter((path) => !expected.includes(path))
      .map((path) => `container ${containerName}: ${path} is a unique key of the Bicep but not of the code`),
  ];
}

const FORBIDDEN: ReadonlyArray<[RegExp, string]> = [
  [/\blist\w*Keys?\s*\(/i, 'a listKeys() call'],
  [/\blistConnectionStrings\s*\(/i, 'a listConnectionStrings() call'],
  [/SharedAccessKey/i, 'a shared access key'],
  [/AccountKey\s*=/i, 'a storage account key'],
  [/DefaultEndpointsProtocol\s*=/i, 'a storage connection string'],
  [/Endpoint\s*=\s*sb:\/\//i, 'a Service Bus connection string'],
  [/AuthorizationRules/i, 'a SAS authorization rule'],
  [/\bprimary(Master|ReadonlyMaster)?Key\b/i, 'an account key'],
  [/\bconnectionStrings\s*:/i, 'site connection strings'],
];

/** (d) No key or connection string anywhere (comments excepted), and local auth off everywhere. */
function checkNoSecrets(files: readonly BicepFile[]): string[] {
  const problems: string[] = [];
  const insights = new Set(
    resourceBlocks(files)
      .filter((b) => b.type === 'Microsoft.Insights/components')
      .map((b) => b.symbol),
  );
  for (const file of files) {
    let code = stripComments(file.text);
    for (const [pattern, what] of FORBIDDEN) {
      if (pattern.test(code)) problems.push(`${file.path} contains ${what}`);
    }
    // The only connection string allowed is Application Insights', which identifies the resource
    // and, with local auth disabled, grants nothing without an Entra token.
    code = code.replace(/\b(\w+)\.properties\.ConnectionString\b/g, (whole, symbol: string) =>
      insights.has(symbol) ? '' : whole,
    );
    if (/connectionString/i.test(code))
      problems.push(`${file.path} reads a connection string other than Application Insights'`);
  }
  return problems;
}

/** (d) Service Bus, Cosmos DB and Application Insights refuse keys; storage refuses shared keys. */
function checkLocalAuthDisabled(files: readonly BicepFile[]): string[] {
  const problems: string[] = [];
  const rules: ReadonlyArray<[string, string, boolean]> = [
    ['Microsoft.ServiceBus/namespaces', 'disableLocalAuth', true],
    ['Microsoft.DocumentDB/databaseAccounts', 'disableLocalAuth', true],
    ['Microsoft.Insights/components', 'DisableLocalAuth', true],
    ['Microsoft.Storage/storageAccounts', 'allowSharedKeyAccess', false],
  ];
  for (const [type, key, required] of rules) {
    const blocks = declared(files, type);
    if (blocks.length === 0) problems.push(`no ${type} is declared`);
    for (const block of blocks) {
      if (booleanProperty(block.body, key) !== required) {
        problems.push(`${type} ${block.symbol} (${block.file}): ${key} must be ${required}`);
      }
    }
  }
  return problems;
}

/** (e) local.settings.sample.json names the same settings as the code (plus the runtime's). */
function checkLocalSettings(sample: unknown, settingNames: readonly string[]): string[] {
  const values = (sample as { Values?: Record<string, unknown> }).Values;
  if (values === undefined) return ['local.settings.sample.json has no Values'];
  const given = Object.keys(values);
  const problems: string[] = [];
  for (const name of settingNames) {
    if (!given.includes(name)) problems.push(`local.settings.sample.json lacks ${name}`);
  }
  for (const name of given) {
    if (!settingNames.includes(name) && !isLocalRuntimeSetting(name)) {
      problems.push(`local.settings.sample.json sets ${name}, which the code does not read`);
    }
  }
  return problems;
}

/** (f) The Node major the Function App runs is one that package.json `engines` accepts. */
function checkNodeRuntime(files: readonly BicepFile[], engines: string): string[] {
  const sites = declared(files, 'Microsoft.Web/sites');
  if (sites.length !== 1) return [`expected one Microsoft.Web/sites, found ${sites.length}`];
  const runtime = /\bruntime\s*:\s*\{\s*name\s*:\s*'([^']+)'\s*version\s*:\s*'([^']+)'/.exec(sites[0].body);
  if (runtime === null) return ['the Function App declares no functionAppConfig.runtime { name, version }'];
  const [, name, version] = runtime;
  if (name !== 'node') return [`the Function App runs ${name}, not node`];
  const majors = [...engines.matchAll(/\^(\d+)\./g)].map((m) => m[1]);
  return majors.includes(version)
    ? []
    : [
        `the Function App runs Node ${version}; package.json engines (${engines}) accepts ${majors.join(', ')}`,
      ];
}

/** (g) FTP and SCM basic publishing credentials are off on the Function App. */
function checkBasicPublishingOff(files: readonly BicepFile[]): string[] {
  const policies = declared(files, 'Microsoft.Web/sites/basicPublishingCredentialsPolicies');
  const problems: string[] = [];
  for (const name of ['ftp', 'scm']) {
    const policy = policies.find((block) => literalProperty(block.body, 'name') === name);
    if (policy === undefined) problems.push(`no basicPublishingCredentialsPolicies '${name}'`);
    else if (booleanProperty(policy.body, 'allow') !== false)
      problems.push(`basic publishing credentials '${name}' are allowed`);
  }
  return problems;
}

/** (h) Public network access follows the private-networking switch; every data service has an endpoint. */
function checkPrivateNetworking(files: readonly BicepFile[]): string[] {
  const problems: string[] = [];
  for (const type of [
    'Microsoft.ServiceBus/namespaces',
    'Microsoft.DocumentDB/databaseAccounts',
    'Microsoft.Storage/storageAccounts',
  ]) {
    for (const block of declared(files, type)) {
      if (property(block.body, 'publicNetworkAccess') !== 'publicNetworkAccess') {
        problems.push(
          `${type} ${block.symbol}: publicNetworkAccess is not the parameter that private networking turns off`,
        );
      }
    }
  }
  const network = files.find((file) => file.path.endsWith(join('modules', 'network.bicep')));
  const groups =
    network === undefined
      ? []
      : [...stripComments(network.text).matchAll(/groupId:\s*'([^']+)'/g)].map((m) => m[1]);
  for (const group of ['namespace', 'Sql', 'blob', 'queue', 'table']) {
    if (!groups.includes(group)) problems.push(`no private endpoint for sub-resource ${group}`);
  }
  return problems;
}

/**
 * (j) The operations workbook: one shared workbook of category `workbook` on the Application Insights
 * resource of its module, named by `guid()` (the resource type takes a GUID; a stable one updates it
 * on the next deployment), its `serializedData` the JSON file `loadTextContent` reads, a Notebook/1.0
 * workbook, each `__PLACEHOLDER__` in it filled by a `replace` and none filled that it lacks.
 */
function checkWorkbook(
  files: readonly BicepFile[],
  readFile: (path: string) => string | undefined,
): string[] {
  const workbooks = declared(files, 'Microsoft.Insights/workbooks');
  if (workbooks.length !== 1) return [`expected one Microsoft.Insights/workbooks, found ${workbooks.length}`];
  const [workbook] = workbooks;
  const problems: string[] = [];
  if (!/^guid\(/.test(property(workbook.body, 'name') ?? ''))
    problems.push('the workbook is not named by guid(): the resource type takes a GUID');
  if (literalProperty(workbook.body, 'category') !== 'workbook')
    problems.push("the workbook's category is not 'workbook'");
  if (literalProperty(workbook.body, 'kind') !== 'shared')
    problems.push("the workbook's kind is not 'shared'");
  const file = files.find((candidate) => candidate.path === workbook.file);
  const components = declared(
    files.filter((candidate) => candidate.path === workbook.file),
    'Microsoft.Insights/components',
  ).map((block) => `${block.symbol}.id`);
  if (!components.includes(property(workbook.body, 'sourceId') ?? ''))
    problems.push("the workbook's sourceId is not the Application Insights resource of its module");
  if (property(workbook.body, 'serializedData') === undefined)
    problems.push('the workbook has no serializedData');
  const text = file === undefined ? '' : stripComments(file.text);
  const loads = [...text.matchAll(/loadTextContent\(\s*'([^']+)'\s*\)/g)].map((match) => match[1]);
  if (loads.length !== 1)
    return [...problems, `expected one loadTextContent in ${workbook.file}, found ${loads.length}`];
  const jsonPath = join(dirname(workbook.file), loads[0]);
  const json = readFile(jsonPath);
  if (json === undefined) return [...problems, `${jsonPath} does not exist`];
  let parsed: { version?: unknown; items?: unknown };
  try {
    parsed = JSON.parse(json) as typeof parsed;
  } catch (error) {
    return [...problems, `${jsonPath} is not JSON: ${String(error)}`];
  }
  if (parsed.version !== 'Notebook/1.0' || !Array.isArray(parsed.items) || parsed.items.length === 0)
    problems.push(`${jsonPath} is not a Notebook/1.0 workbook with items`);
  const placeholders = new Set([...json.matchAll(/__[A-Z][A-Z_]*__/g)].map((match) => match[0]));
  // The placeholders are string literals of the module only as the second argument of a replace().
  const filled = new Set([...text.matchAll(/'(__[A-Z][A-Z_]*__)'/g)].map((match) => match[1]));
  for (const placeholder of placeholders) {
    if (!filled.has(placeholder))
      problems.push(`${jsonPath} has ${placeholder}, which ${workbook.file} leaves as it is`);
  }
  for (const placeholder of filled) {
    if (!placeholders.has(placeholder))
      problems.push(`${workbook.file} fills ${placeholder}, which ${jsonPath} lacks`);
  }
  return problems;
}

/**
 * (k) Every alert is enabled, sends to an action group of the templates, and has its runbook in
 * docs/operations.md: a heading `### \`<prefix>-<name>\``, as the alert is named `${namePrefix}-<name>`;
 * the runbook has no heading for an alert that does not exist.
 */
function checkAlerts(files: readonly BicepFile[], runbook: string): string[] {
  const alerts = [
    ...declared(files, 'Microsoft.Insights/metricAlerts'),
    ...declared(files, 'Microsoft.Insights/scheduledQueryRules'),
  ];
  if (alerts.length === 0) return ['no alert is declared'];
  const groups = declared(files, 'Microsoft.Insights/actionGroups').map((block) => `${block.symbol}.id`);
  const problems: string[] = [];
  const names: string[] = [];
  for (const alert of alerts) {
    const name = /^'\$\{namePrefix\}-([a-z0-9-]+)'$/.exec(property(alert.body, 'name') ?? '')?.[1];
    if (name === undefined) {
      problems.push(`alert ${alert.symbol} is not named '\${namePrefix}-<name>'`);
      continue;
    }
    names.push(name);
    if (booleanProperty(alert.body, 'enabled') !== true) problems.push(`alert ${name} is not enabled`);
    const actions = /\bactions\s*:\s*[[{]/.exec(alert.body);
    const sent =
      actions === null
        ? ''
        : alert.body.slice(
            actions.index,
            closingBracket(alert.body, actions.index + actions[0].length - 1) + 1,
          );
    if (!groups.some((group) => sent.includes(group)))
      problems.push(`alert ${name} sends to no action group`);
    if (!runbook.includes(`### \`<prefix>-${name}\``))
      problems.push(`alert ${name} has no runbook section in docs/operations.md`);
  }
  for (const match of runbook.matchAll(/^### `<prefix>-([a-z0-9-]+)`/gm)) {
    if (!names.includes(match[1]))
      problems.push(`docs/operations.md has a runbook for ${match[1]}, which is no alert`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

function readBicepFiles(dir: string): BicepFile[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.bicep(param)?$/.test(entry.name))
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path: relative(ROOT, path), text: readFileSync(path, 'utf8') };
    })
    .sort((a, b) => a.path.localeCompare(b.path));
}

const FILES = readBicepFiles(BICEP_DIR);
const TEMPLATES = FILES.filter((file) => file.path.endsWith('.bicep'));
const SETTING_NAMES: readonly string[] = Object.values(SETTING);
const QUEUE_NAMES: readonly string[] = Object.values(QUEUE);
const ENGINES: string = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
).engines.node;
const LOCAL_SAMPLE: unknown = JSON.parse(readFileSync(join(ROOT, 'local.settings.sample.json'), 'utf8'));
const RUNBOOK = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
/** A repository file's text, or undefined when there is none. */
function readRepositoryFile(path: string): string | undefined {
  try {
    return readFileSync(join(ROOT, path), 'utf8');
  } catch {
    return undefined;
  }
}

/** A copy of the files with one file's text changed; fails if the edit changed nothing. */
function edit(files: readonly BicepFile[], path: string, change: (text: string) => string): BicepFile[] {
  return files.map((file) => {
    if (file.path !== join('bicep', path)) return file;
    const text = change(file.text);
    if (text === file.text) throw new Error(`the edit of ${path} changed nothing`);
    return { ...file, text };
  });
}

/** Replaces the first `search` after `anchor` (so one resource of several can be changed). */
function replaceAfter(text: string, anchor: string, search: string, replacement: string): string {
  const at = text.indexOf(anchor);
  if (at === -1) return text;
  const found = text.indexOf(search, at);
  return found === -1 ? text : text.slice(0, found) + replacement + text.slice(found + search.length);
}

/**
 * (j) App Service authentication (src/functions/http/actor.ts): an authsettingsV2 resource, declared
 * only when main.bicep names the operators' app registration, that requires sign-in with Microsoft
 * Entra ID for that registration and holds no client secret.
 */
function checkOperatorAuthentication(files: readonly BicepFile[]): string[] {
  const blocks = declared(files, 'Microsoft.Web/sites/config').filter(
    (block) => literalProperty(block.body, 'name') === 'authsettingsV2',
  );
  if (blocks.length !== 1) return [`expected one authsettingsV2 resource, found ${blocks.length}`];
  const [block] = blocks;
  const problems: string[] = [];
  const text = stripComments(files.find((file) => file.path === block.file)?.text ?? '');
  const conditioned = new RegExp(
    `resource\\s+${block.symbol}\\s+'[^']+'\\s*=\\s*if\\s*\\(\\s*!empty\\(operatorsAppClientId\\)\\s*\\)`,
  );
  if (!conditioned.test(text))
    problems.push('authsettingsV2 is not declared only when operatorsAppClientId is set');
  if (booleanProperty(block.body, 'requireAuthentication') !== true) {
    problems.push('authsettingsV2: requireAuthentication must be true');
  }
  if (literalProperty(block.body, 'unauthenticatedClientAction') === 'AllowAnonymous') {
    problems.push('authsettingsV2: unauthenticated callers must not be let through');
  }
  if (property(block.body, 'clientId') !== 'operatorsAppClientId') {
    problems.push('authsettingsV2: the Entra registration is not operatorsAppClientId');
  }
  if (/clientSecret/i.test(block.body)) problems.push('authsettingsV2: holds a client secret setting');
  const main = files.find((file) => file.path === join('bicep', 'main.bicep'))?.text ?? '';
  if (!/operatorsAppClientId:\s*operatorsAppClientId/.test(main)) {
    problems.push('main.bicep does not pass operatorsAppClientId to the Function App');
  }
  return problems;
}

/**
 * (k) The app's identity reads and writes every container but the operators' journal (the
 * Data Contributor, one assignment per container listed in `appContainerNames`), and may only add to
 * and read the journal (a custom role with no replace or delete). No assignment covers a database.
 */
function checkCosmosRoleScopes(files: readonly BicepFile[], journal: string): string[] {
  const containers = declared(files, 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers');
  const cosmos = stripComments(
    files.find((file) => file.path === join('bicep', 'modules', 'cosmos.bicep'))?.text ?? '',
  );
  const listed = /output\s+appContainerNames\s+array\s*=\s*\[([^\]]*)\]/.exec(cosmos)?.[1] ?? '';
  const listedSymbols = [...listed.matchAll(/(\w+)\.name/g)].map((match) => match[1]);
  const problems: string[] = [];
  for (const container of containers) {
    const name = literalProperty(container.body, 'name');
    const isListed = listedSymbols.includes(container.symbol);
    if (name === journal && isListed)
      problems.push(`container ${name}: the journal is given the Data Contributor`);
    if (name !== journal && !isListed)
      problems.push(`container ${name}: not in appContainerNames, so the app has no role on it`);
  }
  const definitions = declared(files, 'Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions');
  for (const definition of definitions) {
    if (/items\/(replace|upsert|delete)|items\/\*|containers\/\*/.test(definition.body)) {
      problems.push(`role ${definition.symbol} can rewrite or delete items`);
    }
  }
  for (const assignment of declared(files, 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments')) {
    if (!/\/colls\//.test(property(assignment.body, 'scope') ?? '')) {
      problems.push(`role assignment ${assignment.symbol} is not scoped to a container`);
    }
  }
  return problems;
}

describe('the Bicep agrees with the code', () => {
  it('finds the templates', () => {
    expect(TEMPLATES.map((file) => file.path)).toEqual(
      expect.arrayContaining([join('bicep', 'main.bicep'), join('bicep', 'modules', 'functionapp.bicep')]),
    );
  });

  it('(a) gives the Function App exactly the settings the code reads', () => {
    expect(checkAppSettings(TEMPLATES, SETTING_NAMES)).toEqual([]);
  });

  it('(b) declares the queues of docs/messages.md with their flags, unpartitioned', () => {
    expect(checkQueues(TEMPLATES, QUEUE_CONTRACT, QUEUE_NAMES)).toEqual([]);
  });

  it('(b) creates each queue with the flags the operations assume (QUEUE_FLAGS, no Manage right to ask)', () => {
    expect(checkQueues(TEMPLATES, QUEUE_FLAGS, QUEUE_NAMES)).toEqual([]);
    const parkedWithoutDuplicates = {
      ...QUEUE_FLAGS,
      parked: { requiresSession: false, requiresDuplicateDetection: false },
    };
    expect(checkQueues(TEMPLATES, parkedWithoutDuplicates, QUEUE_NAMES)).toEqual([
      'queue parked: requiresDuplicateDetection is true, docs/messages.md says false',
    ]);
  });

  it('(c) partitions the orders container by /orderId', () => {
    expect(checkOrdersContainer(TEMPLATES, ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH)).toEqual([]);
  });

  it('(c) declares the containers of the built-in downstream services with their partition keys', () => {
    expect(checkOrdersContainer(TEMPLATES, INVENTORY_CONTAINER, INVENTORY_PARTITION_KEY_PATH)).toEqual([]);
    expect(checkOrdersContainer(TEMPLATES, DOWNSTREAM_CONTAINER, DOWNSTREAM_PARTITION_KEY_PATH)).toEqual([]);
    expect(checkOrdersContainer(TEMPLATES, INVENTORY_CONTAINER, '/orderId')).toHaveLength(1);
  });

  it("(c) declares the operators' journal partitioned as the code writes it", () => {
    expect(checkOrdersContainer(TEMPLATES, OPERATIONS_CONTAINER, OPERATIONS_PARTITION_KEY_PATH)).toEqual([]);
  });

  it.each([
    [ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH],
    [INVENTORY_CONTAINER, INVENTORY_PARTITION_KEY_PATH],
    [DOWNSTREAM_CONTAINER, DOWNSTREAM_PARTITION_KEY_PATH],
    [OPERATIONS_CONTAINER, OPERATIONS_PARTITION_KEY_PATH],
  ])('(i) indexes on %s only the paths the code queries, /* excluded', (container, key) => {
    expect(checkIndexingPolicy(TEMPLATES, container, key, queriedFieldsOf(container))).toEqual([]);
  });

  it.each([[ORDERS_CONTAINER], [INVENTORY_CONTAINER], [DOWNSTREAM_CONTAINER]])(
    '(i) declares on %s the unique keys the code relies on',
    (container) => {
      expect(checkUniqueKeys(TEMPLATES, container, uniqueKeysOf(container))).toEqual([]);
    },
  );

  it('(j) puts App Service authentication with Entra ID in front of the functions when an app registration is named', () => {
    expect(checkOperatorAuthentication(TEMPLATES)).toEqual([]);
    const functionApp = 'modules/functionapp.bicep';
    const optional = edit(TEMPLATES, functionApp, (text) =>
      text.replace('requireAuthentication: true', 'requireAuthentication: false'),
    );
    expect(checkOperatorAuthentication(optional)).toEqual([
      'authsettingsV2: requireAuthentication must be true',
    ]);
    const always = edit(TEMPLATES, functionApp, (text) =>
      text.replace(' = if (!empty(operatorsAppClientId))', ''),
    );
    expect(checkOperatorAuthentication(always)).toEqual([
      'authsettingsV2 is not declared only when operatorsAppClientId is set',
    ]);
  });

  it("(k) gives the app its containers and only adds to the operators' journal", () => {
    expect(checkCosmosRoleScopes(TEMPLATES, OPERATIONS_CONTAINER)).toEqual([]);
    const cosmos = 'modules/cosmos.bicep';
    const unlisted = edit(TEMPLATES, cosmos, (text) => text.replace('  downstreamContainer.name\n', ''));
    expect(checkCosmosRoleScopes(unlisted, OPERATIONS_CONTAINER)).toEqual([
      'container downstream: not in appContainerNames, so the app has no role on it',
    ]);
    const rewrites = edit(TEMPLATES, cosmos, (text) =>
      text.replace('containers/items/create', 'containers/items/*'),
    );
    expect(checkCosmosRoleScopes(rewrites, OPERATIONS_CONTAINER)).toEqual([
      'role journalAppenderRole can rewrite or delete items',
    ]);
    const wholeDatabase = edit(TEMPLATES, 'modules/roles.bicep', (text) =>
      text.replace(
        "'${cosmos.id}/dbs/${cosmosDatabaseName}/colls/${container}'",
        "'${cosmos.id}/dbs/${cosmosDatabaseName}'",
      ),
    );
    expect(checkCosmosRoleScopes(wholeDatabase, OPERATIONS_CONTAINER)).toEqual([
      'role assignment cosmosData is not scoped to a container',
    ]);
  });

  it('(d) holds no key or connection string, and disables local auth', () => {
    expect(checkNoSecrets(FILES)).toEqual([]);
    expect(checkLocalAuthDisabled(TEMPLATES)).toEqual([]);
  });

  it('(e) local.settings.sample.json names the same settings', () => {
    expect(checkLocalSettings(LOCAL_SAMPLE, SETTING_NAMES)).toEqual([]);
  });

  it('(g) disables FTP and SCM basic publishing credentials', () => {
    expect(checkBasicPublishingOff(TEMPLATES)).toEqual([]);
  });

  it('(h) can turn public network access off, with private endpoints for Service Bus, Cosmos DB and Storage', () => {
    expect(checkPrivateNetworking(TEMPLATES)).toEqual([]);
  });

  it('(f) deploys Node 22, a version package.json engines accepts', () => {
    expect(checkNodeRuntime(TEMPLATES, ENGINES)).toEqual([]);
    expect(ENGINES).toMatch(/\^22\./);
  });

  it('(j) deploys the operations workbook from bicep/workbooks, every placeholder filled', () => {
    expect(checkWorkbook(TEMPLATES, readRepositoryFile)).toEqual([]);
  });

  it('(k) sends every alert to the operators, each with its runbook in docs/operations.md', () => {
    expect(checkAlerts(TEMPLATES, RUNBOOK)).toEqual([]);
    expect(declared(TEMPLATES, 'Microsoft.Insights/scheduledQueryRules').length).toBeGreaterThanOrEqual(7);
  });
});

describe('each check fails when one side changes', () => {
  const functionApp = 'modules/functionapp.bicep';
  const serviceBus = 'modules/servicebus.bicep';
  const cosmos = 'modules/cosmos.bicep';

  it('(a) a setting removed from the Bicep', () => {
    const files = edit(TEMPLATES, functionApp, (text) =>
      text.replace(/\{\s*name: 'PAYMENT_CREDIT_LIMIT'[^}]*\}/, ''),
    );
    expect(checkAppSettings(files, SETTING_NAMES)).toEqual([
      'app setting PAYMENT_CREDIT_LIMIT is read by the code but not set in the Bicep',
    ]);
  });

  it('(a) a setting added to the code only', () => {
    expect(checkAppSettings(TEMPLATES, [...SETTING_NAMES, 'ORDER_ARCHIVE_DAYS'])).toEqual([
      'app setting ORDER_ARCHIVE_DAYS is read by the code but not set in the Bicep',
    ]);
  });

  it('(a) a setting added to the Bicep only, unless the runtime reads it', () => {
    const add = (name: string) =>
      edit(TEMPLATES, functionApp, (text) =>
        text.replace('appSettings: [', `appSettings: [\n{ name: '${name}'\n value: 'x' }`),
      );
    expect(checkAppSettings(add('ORDER_ARCHIVE_DAYS'), SETTING_NAMES)).toEqual([
      'app setting ORDER_ARCHIVE_DAYS is set in the Bicep but read by neither the code nor the runtime',
    ]);
    expect(checkAppSettings(add('FUNCTIONS_EXTENSION_VERSION'), SETTING_NAMES)).toEqual([]);
    expect(checkAppSettings(add('AzureWebJobsStorage__blobServiceUri'), SETTING_NAMES)).toEqual([]);
  });

  it('(a) a setting renamed on one side', () => {
    const files = edit(TEMPLATES, functionApp, (text) =>
      text.replace("'CosmosDb__databaseName'", "'COSMOS_DATABASE'"),
    );
    expect(checkAppSettings(files, SETTING_NAMES)).toEqual([
      'app setting CosmosDb__databaseName is read by the code but not set in the Bicep',
      'app setting COSMOS_DATABASE is set in the Bicep but read by neither the code nor the runtime',
    ]);
  });

  it('(b) requiresSession flipped on order-transactions', () => {
    const files = edit(TEMPLATES, serviceBus, (text) =>
      replaceAfter(text, "name: 'order-transactions'", 'requiresSession: true', 'requiresSession: false'),
    );
    expect(checkQueues(files, QUEUE_CONTRACT, QUEUE_NAMES)).toEqual([
      'queue order-transactions: requiresSession is false, docs/messages.md says true',
    ]);
  });

  it('(b) requiresSession turned on for parked', () => {
    const files = edit(TEMPLATES, serviceBus, (text) =>
      replaceAfter(text, "name: 'parked'", 'requiresSession: false', 'requiresSession: true'),
    );
    expect(checkQueues(files, QUEUE_CONTRACT, QUEUE_NAMES)).toEqual([
      'queue parked: requiresSession is true, docs/messages.md says false',
    ]);
  });

  it('(b) duplicate detection removed from order-transactions', () => {
    const files = edit(TEMPLATES, serviceBus, (text) =>
      replaceAfter(text, "name: 'order-transactions'", 'requiresDuplicateDetection: true', ''),
    );
    expect(checkQueues(files, QUEUE_CONTRACT, QUEUE_NAMES)).toEqual([
      'queue order-transactions: requiresDuplicateDetection is false, docs/messages.md says true',
    ]);
  });

  it('(b) duplicate detection removed from ledger, which docs/messages.md says detects duplicates', () => {
    const files = edit(TEMPLATES, serviceBus, (text) =>
      replaceAfter(text, "name: 'ledger'", 'requiresDuplicateDetection: true', ''),
    );
    expect(checkQueues(files, QUEUE_CONTRACT, QUEUE_NAMES)).toEqual([
      'queue ledger: requiresDuplicateDetection is false, docs/messages.md says true',
    ]);
  });

  it('(b) a partitioned queue', () => {
    const files = edit(TEMPLATES, serviceBus, (text) =>
      replaceAfter(text, "name: 'ledger'", 'enablePartitioning: false', 'enablePartitioning: true'),
    );
    expect(checkQueues(files, QUEUE_CONTRACT, QUEUE_NAMES)).toEqual([
      "queue ledger is partitioned: the sender's multi-session batches would be refused",
    ]);
  });

  it('(b) a queue renamed in the Bicep, or added to the code only', () => {
    const files = edit(TEMPLATES, serviceBus, (text) => text.replace("name: 'parked'", "name: 'parking'"));
    expect(checkQueues(files, QUEUE_CONTRACT, QUEUE_NAMES)).toEqual([
      'queue parked is used by the code but not declared in the Bicep',
      'queue parking is declared in the Bicep but unknown to the code',
    ]);
    expect(checkQueues(TEMPLATES, QUEUE_CONTRACT, [...QUEUE_NAMES, 'order-events'])).toEqual([
      'queue order-events has no entry in the contract table of this test',
      'queue order-events is used by the code but not declared in the Bicep',
    ]);
  });

  it('(c) another partition key', () => {
    const otherKey = edit(TEMPLATES, cosmos, (text) => text.replace("'/orderId'", "'/id'"));
    expect(checkOrdersContainer(otherKey, ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH)).toEqual([
      'container orders: partition key is ["/id"], the code uses /orderId',
    ]);
    expect(checkOrdersContainer(TEMPLATES, 'orders-v2', ORDERS_PARTITION_KEY_PATH)).toEqual([
      'container orders-v2 is not declared in the Bicep',
    ]);
  });

  it('(i) a queried field not indexed, a path indexed for no query, /* included, or no policy', () => {
    const orders = (queried: readonly string[], files = TEMPLATES): string[] =>
      checkIndexingPolicy(files, ORDERS_CONTAINER, ORDERS_PARTITION_KEY_PATH, queried);
    expect(orders(['kind', 'slot', 'status', 'customerId'])).toEqual([
      'container orders: /customerId/? is queried by the code but not indexed',
    ]);
    expect(orders(['slot', 'status'])).toEqual([
      'container orders: /kind/? is indexed but the code does not query it',
    ]);
    const rootNotExcluded = edit(TEMPLATES, cosmos, (text) =>
      replaceAfter(text, "id: 'orders'", "path: '/*'", "path: '/outbox/*'"),
    );
    expect(orders(['kind', 'slot', 'status'], rootNotExcluded)).toEqual([
      'container orders: the indexing policy does not exclude /*',
    ]);
    const everything = edit(TEMPLATES, cosmos, (text) =>
      replaceAfter(text, "id: 'orders'", "path: '/kind/?'", "path: '/*'"),
    );
    expect(orders(['kind', 'slot', 'status'], everything)).toEqual([
      'container orders: /kind/? is queried by the code but not indexed',
      'container orders: /* is indexed but the code does not query it',
    ]);
    const noPolicy = edit(TEMPLATES, cosmos, (text) =>
      replaceAfter(text, "id: 'inventory'", 'indexingPolicy:', 'unindexedPolicy:'),
    );
    expect(checkIndexingPolicy(noPolicy, INVENTORY_CONTAINER, INVENTORY_PARTITION_KEY_PATH, [])).toEqual([
      'container inventory has no indexing policy: every path is indexed',
    ]);
  });

  it('(i) a unique key the Bicep lacks, or one the code does not know', () => {
    const without = edit(TEMPLATES, cosmos, (text) => text.replace("'/slot'\n", "'/sequence'\n"));
    expect(checkUniqueKeys(without, ORDERS_CONTAINER, ['slot'])).toEqual([
      'container orders: /slot is a unique key of the code but not of the Bicep',
      'container orders: /sequence is a unique key of the Bicep but not of the code',
    ]);
  });

  it('(d) a key or a connection string, but not in a comment', () => {
    const withKeys = edit(TEMPLATES, 'modules/storage.bicep', (text) =>
      text.replace(
        'output name string',
        "output conn string = 'DefaultEndpointsProtocol=https;AccountName=x;AccountKey=${account.listKeys().keys[0].value}'\noutput name string",
      ),
    );
    expect(checkNoSecrets(withKeys)).toEqual([
      'bicep/modules/storage.bicep contains a listKeys() call',
      'bicep/modules/storage.bicep contains a storage account key',
      'bicep/modules/storage.bicep contains a storage connection string',
    ]);
    const withSas = edit(TEMPLATES, serviceBus, (text) =>
      text.replace(
        'output id string',
        "output sas string = 'Endpoint=sb://x/;SharedAccessKeyName=RootManageSharedAccessKey'\noutput id string",
      ),
    );
    expect(checkNoSecrets(withSas)).toEqual([
      'bicep/modules/servicebus.bicep contains a shared access key',
      'bicep/modules/servicebus.bicep contains a Service Bus connection string',
    ]);
    const cosmosString = edit(TEMPLATES, cosmos, (text) =>
      text.replace(
        'output id string',
        'output cs string = account.properties.ConnectionString\noutput id string',
      ),
    );
    expect(checkNoSecrets(cosmosString)).toEqual([
      "bicep/modules/cosmos.bicep reads a connection string other than Application Insights'",
    ]);
    const inComment = edit(TEMPLATES, cosmos, (text) => `// never listKeys() or AccountKey=\n${text}`);
    expect(checkNoSecrets(inComment)).toEqual([]);
  });

  it('(d) local auth left on', () => {
    const cosmosKeys = edit(TEMPLATES, cosmos, (text) =>
      text.replace('disableLocalAuth: true', 'disableLocalAuth: false'),
    );
    expect(checkLocalAuthDisabled(cosmosKeys)).toEqual([
      'Microsoft.DocumentDB/databaseAccounts account (bicep/modules/cosmos.bicep): disableLocalAuth must be true',
    ]);
    const serviceBusKeys = edit(TEMPLATES, serviceBus, (text) => text.replace('disableLocalAuth: true', ''));
    expect(checkLocalAuthDisabled(serviceBusKeys)).toEqual([
      'Microsoft.ServiceBus/namespaces namespace (bicep/modules/servicebus.bicep): disableLocalAuth must be true',
    ]);
    const insightsKeys = edit(TEMPLATES, 'modules/monitoring.bicep', (text) =>
      text.replace('DisableLocalAuth: true', 'DisableLocalAuth: false'),
    );
    expect(checkLocalAuthDisabled(insightsKeys)).toEqual([
      'Microsoft.Insights/components appInsights (bicep/modules/monitoring.bicep): DisableLocalAuth must be true',
    ]);
    const sharedKeys = edit(TEMPLATES, 'modules/storage.bicep', (text) =>
      text.replace('allowSharedKeyAccess: false', 'allowSharedKeyAccess: true'),
    );
    expect(checkLocalAuthDisabled(sharedKeys)).toEqual([
      'Microsoft.Storage/storageAccounts account (bicep/modules/storage.bicep): allowSharedKeyAccess must be false',
    ]);
  });

  it('(e) a setting missing from, or unknown to, local.settings.sample.json', () => {
    const values = (LOCAL_SAMPLE as { Values: Record<string, string> }).Values;
    const withoutTaskHub = {
      Values: Object.fromEntries(Object.entries(values).filter(([name]) => name !== 'DURABLE_TASK_HUB_NAME')),
    };
    expect(checkLocalSettings(withoutTaskHub, SETTING_NAMES)).toEqual([
      'local.settings.sample.json lacks DURABLE_TASK_HUB_NAME',
    ]);
    expect(checkLocalSettings({ Values: { ...values, ORDER_ARCHIVE_DAYS: '30' } }, SETTING_NAMES)).toEqual([
      'local.settings.sample.json sets ORDER_ARCHIVE_DAYS, which the code does not read',
    ]);
    expect(checkLocalSettings(LOCAL_SAMPLE, [...SETTING_NAMES, 'ORDER_ARCHIVE_DAYS'])).toEqual([
      'local.settings.sample.json lacks ORDER_ARCHIVE_DAYS',
    ]);
  });

  it('(f) a Node version the engines do not accept', () => {
    const node18 = edit(TEMPLATES, functionApp, (text) => text.replace("version: '22'", "version: '18'"));
    expect(checkNodeRuntime(node18, ENGINES)).toEqual([
      `the Function App runs Node 18; package.json engines (${ENGINES}) accepts 20, 22`,
    ]);
    expect(checkNodeRuntime(TEMPLATES, '^20.19.0')).toHaveLength(1);
  });

  it('(g) basic publishing credentials left on', () => {
    const scmOn = edit(TEMPLATES, functionApp, (text) =>
      replaceAfter(text, "name: 'scm'", 'allow: false', 'allow: true'),
    );
    expect(checkBasicPublishingOff(scmOn)).toEqual(["basic publishing credentials 'scm' are allowed"]);
  });

  it('(h) public network access hard-wired on, or an endpoint missing', () => {
    const cosmosPublic = edit(TEMPLATES, cosmos, (text) =>
      text.replace('publicNetworkAccess: publicNetworkAccess', "publicNetworkAccess: 'Enabled'"),
    );
    expect(checkPrivateNetworking(cosmosPublic)).toEqual([
      'Microsoft.DocumentDB/databaseAccounts account: publicNetworkAccess is not the parameter that private networking turns off',
    ]);
    const noTable = edit(TEMPLATES, 'modules/network.bicep', (text) =>
      text.replace("groupId: 'table'", "groupId: 'file'"),
    );
    expect(checkPrivateNetworking(noTable)).toEqual(['no private endpoint for sub-resource table']);
  });

  it('(j) a workbook named, placed or filled otherwise', () => {
    const monitoring = 'modules/monitoring.bicep';
    const named = edit(TEMPLATES, monitoring, (text) =>
      text.replace("name: guid(appInsights.id, 'operations-workbook')", "name: 'operations'"),
    );
    expect(checkWorkbook(named, readRepositoryFile)).toEqual([
      'the workbook is not named by guid(): the resource type takes a GUID',
    ]);
    const category = edit(TEMPLATES, monitoring, (text) =>
      text.replace("category: 'workbook'", "category: 'sentinel'"),
    );
    expect(checkWorkbook(category, readRepositoryFile)).toEqual([
      "the workbook's category is not 'workbook'",
    ]);
    const source = edit(TEMPLATES, monitoring, (text) =>
      text.replace('sourceId: appInsights.id', 'sourceId: workspace.id'),
    );
    expect(checkWorkbook(source, readRepositoryFile)).toEqual([
      "the workbook's sourceId is not the Application Insights resource of its module",
    ]);
    const unfilled = edit(TEMPLATES, monitoring, (text) =>
      text.replace("'__COSMOS_ACCOUNT_ID__'", "'__COSMOS_ID__'"),
    );
    expect(checkWorkbook(unfilled, readRepositoryFile)).toEqual([
      'bicep/workbooks/operations.workbook.json has __COSMOS_ACCOUNT_ID__, which bicep/modules/monitoring.bicep leaves as it is',
      'bicep/modules/monitoring.bicep fills __COSMOS_ID__, which bicep/workbooks/operations.workbook.json lacks',
    ]);
    const missing = edit(TEMPLATES, monitoring, (text) =>
      text.replace('../workbooks/operations.workbook.json', '../dashboards/operations.workbook.json'),
    );
    expect(checkWorkbook(missing, readRepositoryFile)).toEqual([
      'bicep/dashboards/operations.workbook.json does not exist',
    ]);
    expect(
      checkWorkbook(TEMPLATES, (path) =>
        path.endsWith('.json') ? '{"version": "Notebook/1.0"}' : undefined,
      ),
    ).toContain('bicep/workbooks/operations.workbook.json is not a Notebook/1.0 workbook with items');
  });

  it('(k) an alert without its action group or its runbook, and a runbook without its alert', () => {
    const alerts = 'modules/alerts.bicep';
    const silent = edit(TEMPLATES, alerts, (text) =>
      replaceAfter(text, "name: '${namePrefix}-saga-overdue'", 'actionGroup.id', "'/none'"),
    );
    expect(checkAlerts(silent, RUNBOOK)).toEqual(['alert saga-overdue sends to no action group']);
    const renamed = edit(TEMPLATES, alerts, (text) =>
      text.replace("name: '${namePrefix}-backlog'", "name: '${namePrefix}-queue-backlog'"),
    );
    expect(checkAlerts(renamed, RUNBOOK)).toEqual([
      'alert queue-backlog has no runbook section in docs/operations.md',
      'docs/operations.md has a runbook for backlog, which is no alert',
    ]);
    const disabled = edit(TEMPLATES, alerts, (text) =>
      replaceAfter(text, "name: '${namePrefix}-cosmos-throttled'", 'enabled: true', 'enabled: false'),
    );
    expect(checkAlerts(disabled, RUNBOOK)).toEqual(['alert cosmos-throttled is not enabled']);
  });
});
