/**
 * Every name the operations queries use is a name the app emits: the queries of the workbook
 * (bicep/workbooks/operations.workbook.json), of the log alerts (bicep/modules/alerts.bicep) and of
 * the runbook (docs/operations.md) ask for metric and event names, customDimensions keys and values,
 * and message texts that src/ writes. A query for a name nothing emits finds nothing and its alert
 * never fires, without an error anywhere; this test fails instead.
 *
 * What the app emits is read from src/ with the TypeScript compiler, types included, so that a name
 * built from a union (`Saga.${change.status}`) stands for each of its values, and a property object
 * built from spreads has its keys:
 * - `telemetry.metric(name, value, properties)`: `customMetrics`, its dimensions the properties that
 *   src/adapters/telemetry.ts keeps on a metric (`METRIC_DIMENSIONS`);
 * - `telemetry.event(name, properties)`: `customEvents`, named by the log record's
 *   `microsoft.custom_event.name` (the exporter's `logToEnvelope` makes such a record EventData);
 * - `telemetry.trace(level, message, properties)` and a function's own `context.log/warn/error`
 *   (exported by the worker, src/functions/index.ts): `traces`, the message its body;
 * - span attributes (objects typed as OpenTelemetry `Attributes`, `setAttribute(s)`, and the
 *   `ATTRIBUTE` names of src/functions/order-trace.ts): `customDimensions` of `requests` (server and
 *   consumer spans) and `dependencies` (producer, client and internal spans), which is where
 *   `readableSpanToEnvelope` of @azure/monitor-opentelemetry-exporter puts them;
 * - span names: the invocation spans' (`InvocationSpan.name`) name `requests` rows, the spans started
 *   for an order (`startOrderSpan`) name `dependencies` rows.
 * The platform metrics the workbook and the metric alerts chart are checked against the metric lists
 * of Microsoft Learn instead (`PLATFORM_METRICS`).
 *
 * And every query reads what sampling leaves as it should (`samplingProblems`): an alert only what
 * is exported whatever the sampling (metrics, failed rows, warnings, `UNSAMPLED_EVENTS`), a chart or
 * a runbook query sampled rows only weighed by `itemCount`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');

// ---------------------------------------------------------------------------------------------
// What the app emits

/** A name or message as a pattern: exact text, with `.+` where a value is not known statically. */
interface Emitted {
  pattern: RegExp;
  /** The literal pieces of the name or message, in order (the first is its start). */
  fragments: string[];
  where: string;
  /** The properties the call passes; `open` when some are not known statically (an index signature). */
  keys: Set<string>;
  open: boolean;
  /** A trace's level, when the call gives a literal one (`warning` and `error` are never sampled). */
  level?: string;
}

export interface Catalogue {
  metrics: Emitted[];
  events: Emitted[];
  traces: Emitted[];
  /** Span attribute names, for `requests` and `dependencies`. */
  attributes: Set<string>;
  /** The names of `requests` rows: the invocation spans' names (src/functions/order-trace.ts). */
  requests: Emitted[];
  /** The names of `dependencies` rows: the spans started for an order (src/functions/order-trace.ts). */
  dependencies: Emitted[];
  /** The events exported whatever the sampling (src/adapters/telemetry.ts `UNSAMPLED_EVENTS`). */
  unsampledEvents: Set<string>;
  /** The metrics exported as distributions (src/adapters/telemetry.ts `DISTRIBUTION_METRICS`). */
  distributionMetrics: Set<string>;
  /** Literal values each property or attribute is given; a key given any non-literal value is absent. */
  values: Map<string, Set<string>>;
  /** Keys given a value that is not known statically somewhere. */
  openValues: Set<string>;
  /** Every literal piece of text in src/, for `has` and `contains` matches on values. */
  texts: string[];
  /** The properties src/adapters/telemetry.ts keeps as a metric's dimensions. */
  metricDimensions: Set<string>;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function readCatalogue(): Catalogue {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  });
  if (parsed === undefined) throw new Error('tsconfig.json could not be read');
  const srcDir = join(ROOT, 'src') + '/';
  const program = ts.createProgram(
    parsed.fileNames.filter((file) => file.startsWith(srcDir)),
    parsed.options,
  );
  const checker = program.getTypeChecker();
  const catalogue: Catalogue = {
    metrics: [],
    events: [],
    traces: [],
    attributes: new Set(),
    requests: [],
    dependencies: [],
    unsampledEvents: new Set(),
    distributionMetrics: new Set(),
    values: new Map(),
    openValues: new Set(),
    texts: [],
    metricDimensions: new Set(),
  };

  /** The string values a type allows, when it allows only literals. */
  const literalsOf = (type: ts.Type): string[] | undefined => {
    if (type.isStringLiteral()) return [type.value];
    if (type.isNumberLiteral()) return [String(type.value)];
    if (type.flags & ts.TypeFlags.BooleanLiteral) return [checker.typeToString(type)];
    if (type.isUnion()) {
      const parts = type.types.map(literalsOf);
      return parts.every((part) => part !== undefined) ? parts.flat() : undefined;
    }
    return undefined;
  };

  /** A name or message expression as alternatives of literal pieces; `undefined` stands for any text. */
  const piecesOf = (node: ts.Expression): Array<Array<string | undefined>> => {
    if (ts.isStringLiteralLike(node)) return [[node.text]];
    if (ts.isTemplateExpression(node)) {
      let alternatives: Array<Array<string | undefined>> = [[node.head.text]];
      for (const span of node.templateSpans) {
        const values = literalsOf(checker.getTypeAtLocation(span.expression));
        const next: Array<Array<string | undefined>> = [];
        for (const prefix of alternatives) {
          for (const value of values ?? [undefined])
            next.push([...prefix, value, span.literal.text].filter((piece) => piece !== ''));
        }
        alternatives = next;
      }
      return alternatives;
    }
    const values = literalsOf(checker.getTypeAtLocation(node));
    return values === undefined ? [[undefined]] : values.map((value) => [value]);
  };

  /**
   * The type of a property's value: its initializer's own, which keeps a literal (`'parked'`) that the
   * object's type widens to `string`.
   */
  const valueType = (property: ts.Symbol): ts.Type | undefined => {
    const declaration = property.valueDeclaration;
    if (declaration === undefined) return undefined;
    if (ts.isPropertyAssignment(declaration)) return checker.getTypeAtLocation(declaration.initializer);
    return checker.getTypeOfSymbolAtLocation(property, declaration);
  };

  const emitted = (node: ts.Expression, properties: ts.Expression | undefined, where: string): Emitted[] => {
    const keys = new Set<string>();
    let open = false;
    if (properties !== undefined) {
      const type = checker.getTypeAtLocation(properties);
      for (const property of type.getProperties()) {
        keys.add(property.name);
        recordValues(property.name, valueType(property));
      }
      open = checker.getIndexInfoOfType(type, ts.IndexKind.String) !== undefined;
    }
    return piecesOf(node).map((pieces) => {
      // Adjacent literal pieces join; an unknown piece is a wildcard.
      const fragments: string[] = [];
      let pattern = '';
      let previousLiteral = false;
      for (const piece of pieces) {
        if (piece === undefined) {
          pattern += '.+';
          previousLiteral = false;
        } else {
          pattern += escapeRegExp(piece);
          if (previousLiteral) fragments[fragments.length - 1] += piece;
          else fragments.push(piece);
          previousLiteral = true;
        }
      }
      if (pieces[0] === undefined) fragments.unshift('');
      return { pattern: new RegExp(`^${pattern}$`), fragments, where, keys, open };
    });
  };

  const recordValues = (key: string, type: ts.Type | undefined): void => {
    const nonNullable = type === undefined ? undefined : checker.getNonNullableType(type);
    const values = nonNullable === undefined ? undefined : literalsOf(nonNullable);
    if (values === undefined) {
      catalogue.openValues.add(key);
      return;
    }
    const known = catalogue.values.get(key) ?? new Set<string>();
    for (const value of values) known.add(value);
    catalogue.values.set(key, known);
  };

  const isAttributes = (type: ts.Type | undefined): boolean =>
    type !== undefined &&
    (type.aliasSymbol?.name === 'Attributes' ||
      type.getSymbol()?.name === 'Attributes' ||
      (type.isUnion() && type.types.some(isAttributes)));

  const attributesOf = (node: ts.Expression): void => {
    for (const property of checker.getTypeAtLocation(node).getProperties()) {
      catalogue.attributes.add(property.name);
      recordValues(property.name, valueType(property));
    }
  };

  /** The interface a called method is declared in (`Telemetry`, `InvocationContext`, ...). */
  const declaringInterface = (call: ts.CallExpression): string | undefined => {
    const declaration = checker.getResolvedSignature(call)?.getDeclaration();
    const parent = declaration?.parent;
    if (parent !== undefined && (ts.isInterfaceDeclaration(parent) || ts.isClassDeclaration(parent)))
      return parent.name?.text;
    return undefined;
  };

  for (const file of program.getSourceFiles()) {
    if (!file.fileName.startsWith(srcDir)) continue;
    const where = (node: ts.Node): string =>
      `${file.fileName.slice(ROOT.length + 1)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteralLike(node)) catalogue.texts.push(node.text);
      if (ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node))
        catalogue.texts.push(node.text);
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const method = node.expression.name.text;
        const owner = declaringInterface(node);
        const [first, second, third] = node.arguments;
        if (owner === 'Telemetry' && method === 'metric' && first !== undefined)
          catalogue.metrics.push(...emitted(first, third, where(node)));
        if (owner === 'Telemetry' && method === 'event' && first !== undefined)
          catalogue.events.push(...emitted(first, second, where(node)));
        if (owner === 'Telemetry' && method === 'trace' && second !== undefined) {
          const levels = first === undefined ? undefined : literalsOf(checker.getTypeAtLocation(first));
          const level = levels?.every((one) => one === levels[0]) === true ? levels[0] : undefined;
          catalogue.traces.push(...emitted(second, third, where(node)).map((entry) => ({ ...entry, level })));
        }
        // A function's own log lines, which the worker exports as traces (src/functions/index.ts).
        if (
          owner !== undefined &&
          /Context$/.test(owner) &&
          ['log', 'info', 'warn', 'error'].includes(method) &&
          first !== undefined
        )
          catalogue.traces.push(...emitted(first, undefined, where(node)));
        if (method === 'setAttributes' && first !== undefined) attributesOf(first);
        if (method === 'setAttribute' && first !== undefined) {
          for (const name of literalsOf(checker.getTypeAtLocation(first)) ?? []) {
            catalogue.attributes.add(name);
            if (second !== undefined) recordValues(name, checker.getTypeAtLocation(second));
          }
        }
      }
      if (ts.isObjectLiteralExpression(node) && isAttributes(checker.getContextualType(node)))
        attributesOf(node);
      // A span started for an order (a send, a saga's start) names its `dependencies` row.
      if (
        ts.isCallExpression(node) &&
        ts.isIdentifier(node.expression) &&
        node.expression.text === 'startOrderSpan' &&
        node.arguments[0] !== undefined
      )
        catalogue.dependencies.push(...emitted(node.arguments[0], undefined, where(node)));
      // An invocation span's name names its `requests` row.
      if (
        ts.isObjectLiteralExpression(node) &&
        checker.getContextualType(node)?.getSymbol()?.name === 'InvocationSpan'
      ) {
        for (const property of node.properties) {
          if (
            ts.isPropertyAssignment(property) &&
            ts.isIdentifier(property.name) &&
            property.name.text === 'name'
          )
            catalogue.requests.push(...emitted(property.initializer, undefined, where(property)));
        }
      }
      if (
        ts.isPropertyAssignment(node) &&
        ts.isIdentifier(node.name) &&
        node.name.text === 'attributes' &&
        !ts.isObjectLiteralExpression(node.initializer)
      )
        attributesOf(node.initializer);
      // The attribute names of order-trace.ts, and the dimensions telemetry.ts keeps on a metric.
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
        if (node.name.text === 'ATTRIBUTE') {
          for (const property of checker.getTypeAtLocation(node.initializer).getProperties()) {
            const declaration = property.valueDeclaration;
            const values =
              declaration === undefined
                ? undefined
                : literalsOf(checker.getTypeOfSymbolAtLocation(property, declaration));
            for (const value of values ?? []) catalogue.attributes.add(value);
          }
        }
        const sets: Record<string, Set<string>> = {
          METRIC_DIMENSIONS: catalogue.metricDimensions,
          UNSAMPLED_EVENTS: catalogue.unsampledEvents,
          DISTRIBUTION_METRICS: catalogue.distributionMetrics,
        };
        const set = Object.hasOwn(sets, node.name.text) ? sets[node.name.text] : undefined;
        if (set !== undefined) {
          node.initializer.forEachChild(function strings(child) {
            if (ts.isStringLiteral(child)) set.add(child.text);
            child.forEachChild(strings);
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return catalogue;
}

// ---------------------------------------------------------------------------------------------
// What the queries ask for

interface Query {
  where: string;
  text: string;
}

const QUOTED = String.raw`(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")`;
const quoted = (match: RegExpMatchArray, index: number): string => match[index] ?? match[index + 1] ?? '';
const KEY = String.raw`customDimensions(?:\.([A-Za-z_][\w]*)|\[\s*${QUOTED}\s*\])`;

/** Problems with one query: each a name, key, value or text the app does not emit. */
export function queryProblems(query: Query, catalogue: Catalogue): string[] {
  const text = query.text;
  const problems: string[] = [];
  const tables = new Set(
    [...text.matchAll(/\b(customMetrics|customEvents|traces|requests|dependencies|exceptions)\b/g)].map(
      (match) => match[1],
    ),
  );
  const candidates = (table: string): Emitted[] =>
    table === 'customMetrics'
      ? catalogue.metrics
      : table === 'customEvents'
        ? catalogue.events
        : table === 'requests'
          ? catalogue.requests
          : table === 'dependencies'
            ? catalogue.dependencies
            : [];
  const emittedIn = [...tables].flatMap(candidates);

  // Names: `name == 'x'`, `name != 'x'`, `name in ('x', 'y')`, `name startswith 'x'`.
  const names: Array<{ name: string; prefix: boolean }> = [];
  for (const match of text.matchAll(new RegExp(String.raw`\bname\s*(?:==|!=|=~)\s*${QUOTED}`, 'g')))
    names.push({ name: quoted(match, 1), prefix: false });
  for (const match of text.matchAll(new RegExp(String.raw`\bname\s+startswith\s+${QUOTED}`, 'g')))
    names.push({ name: quoted(match, 1), prefix: true });
  for (const match of text.matchAll(/\bname\s+in\s*\(([^)]*)\)/g)) {
    for (const item of match[1].matchAll(new RegExp(QUOTED, 'g')))
      names.push({ name: quoted(item, 1), prefix: false });
  }
  const matched: Emitted[] = [];
  for (const { name, prefix } of names) {
    const found = emittedIn.filter((candidate) =>
      prefix ? candidate.fragments[0].startsWith(name) : candidate.pattern.test(name),
    );
    if (found.length === 0)
      problems.push(
        `${query.where}: ${prefix ? 'no name starts with' : 'no'} ${[...tables].join('/')} name ${JSON.stringify(name)} is emitted`,
      );
    matched.push(...found);
  }

  // customDimensions keys: those of the names asked for, else of every name of the tables; span
  // attributes for requests and dependencies; trace properties for traces.
  const allowed = new Set<string>();
  let open = false;
  const metricKeys = (entry: Emitted): string[] =>
    entry.open
      ? [...catalogue.metricDimensions]
      : [...entry.keys].filter((key) => catalogue.metricDimensions.has(key));
  const named = matched.length > 0 ? matched : emittedIn;
  for (const entry of named) {
    for (const key of catalogue.metrics.includes(entry) ? metricKeys(entry) : entry.keys) allowed.add(key);
    if (!catalogue.metrics.includes(entry) && entry.open) open = true;
  }
  if (tables.has('requests') || tables.has('dependencies'))
    for (const key of catalogue.attributes) allowed.add(key);
  if (tables.has('traces')) {
    for (const entry of catalogue.traces) {
      for (const key of entry.keys) allowed.add(key);
      if (entry.open) open = true;
    }
  }
  for (const match of text.matchAll(new RegExp(KEY, 'g'))) {
    const key = match[1] ?? quoted(match, 2);
    if (!allowed.has(key) && !open)
      problems.push(
        `${query.where}: customDimensions key ${JSON.stringify(key)} is not emitted on ${[...tables].join('/')}`,
      );
  }

  // Values compared with a key: `customDimensions[k] == 'v'`, also inside tostring().
  const compared = new RegExp(String.raw`${KEY}\s*\)?\s*==\s*${QUOTED}`, 'g');
  for (const match of text.matchAll(compared)) {
    const key = match[1] ?? quoted(match, 2);
    const value = quoted(match, 4);
    const known = catalogue.values.get(key);
    if (known !== undefined && !catalogue.openValues.has(key) && !known.has(value))
      problems.push(
        `${query.where}: ${key} is never ${JSON.stringify(value)} (the app gives it ${[...known].join(', ')})`,
      );
  }

  // Message texts of traces, and texts a value is searched for.
  for (const match of text.matchAll(
    new RegExp(String.raw`\bmessage\s+(startswith|has|contains|==)\s+${QUOTED}`, 'g'),
  )) {
    const [operator, wanted] = [match[1], quoted(match, 2)];
    // A line relayed whole (the worker's log hook) is no text of its own.
    const texts = catalogue.traces.filter((trace) => trace.fragments.some((fragment) => fragment !== ''));
    const found = texts.some((trace) =>
      operator === 'startswith'
        ? trace.fragments[0].startsWith(wanted)
        : operator === '=='
          ? trace.pattern.test(wanted)
          : trace.fragments.some((fragment) => fragment.includes(wanted)),
    );
    if (!found) problems.push(`${query.where}: no trace message ${operator} ${JSON.stringify(wanted)}`);
  }
  for (const match of text.matchAll(
    new RegExp(String.raw`\b(\w+)\s+(has|contains|has_cs|contains_cs)\s+${QUOTED}`, 'g'),
  )) {
    if (match[1] === 'message' || match[1] === 'name') continue;
    const wanted = quoted(match, 3);
    if (!catalogue.texts.some((piece) => piece.includes(wanted)))
      problems.push(`${query.where}: no text of the app holds ${JSON.stringify(wanted)}`);
  }
  return problems;
}

/**
 * What a query reads that sampling may have dropped. The sampler keeps or drops each order's trace
 * whole (src/adapters/tracing.ts `OrderSampler`); whatever its decision the app exports every metric,
 * every row the exporter marks failed (`success == false`, `ExportSampledOrFailed`), every warning and
 * error, and the events of `UNSAMPLED_EVENTS` (src/adapters/telemetry.ts `ExportSampledOrAlerting`).
 * An alert must read only those: a condition on a sample misses what the dropped orders did. A chart
 * may read sampled rows when it weighs each by the orders it stands for (`itemCount`): a kept order
 * stands for 1 / ratio orders, and since the decision depends on the order id alone, not on what
 * happened to the order, the weighted counts and percentiles are unbiased (their noise grows as fewer
 * orders are kept). What a sample cannot show is an absence (`leftanti`): a missing row may be dropped.
 */
export function samplingProblems(query: Query, catalogue: Catalogue, use: 'alert' | 'chart'): string[] {
  const text = query.text;
  const problems: string[] = [];
  const reads = (table: string): boolean => new RegExp(String.raw`\b${table}\b`).test(text);
  const weighted =
    /\bitemCount\b/.test(text) &&
    !/\b(?:count|countif|dcount|dcountif|percentile|percentiles)\s*\(/.test(text) &&
    !/kind\s*=\s*leftanti/.test(text);
  const sampled = (what: string): void => {
    if (use === 'alert') problems.push(`${query.where}: an alert reads ${what}, which sampling may drop`);
    else if (!weighted)
      problems.push(
        `${query.where}: reads ${what}, which sampling may drop, without weighing rows by itemCount (or reads an absence)`,
      );
  };

  // One order's rows, looked up by its trace or its id: what sampling kept of it, read as such.
  if (use === 'chart' && /\boperation_Id\s*==|customDimensions\.orderId\)\s*==\s*'/.test(text)) return [];
  for (const table of ['requests', 'dependencies']) {
    if (reads(table) && !/\bwhere\b[^|]*\bsuccess\s*==\s*false\b/.test(text))
      sampled(`${table} rows that did not fail`);
  }
  if (reads('traces') && !/\bseverityLevel\s*>=\s*2\b/.test(text)) {
    const messages = [
      ...text.matchAll(new RegExp(String.raw`\bmessage\s+(?:startswith|has|contains|==)\s+${QUOTED}`, 'g')),
    ].map((match) => quoted(match, 1));
    const matching = catalogue.traces.filter((trace) =>
      messages.some((wanted) => trace.fragments.some((fragment) => fragment.includes(wanted))),
    );
    const unsampled = (trace: Emitted): boolean => trace.level === 'warning' || trace.level === 'error';
    if (messages.length === 0 || !matching.every(unsampled)) sampled('information-level traces');
  }
  if (reads('customEvents')) {
    const asked = [
      ...[...text.matchAll(new RegExp(String.raw`\bname\s*(?:==|=~)\s*${QUOTED}`, 'g'))].map((match) => ({
        name: quoted(match, 1),
        prefix: false,
      })),
      ...[...text.matchAll(new RegExp(String.raw`\bname\s+startswith\s+${QUOTED}`, 'g'))].map((match) => ({
        name: quoted(match, 1),
        prefix: true,
      })),
      ...[...text.matchAll(/\bname\s+in\s*\(([^)]*)\)/g)].flatMap((match) =>
        [...match[1].matchAll(new RegExp(QUOTED, 'g'))].map((item) => ({
          name: quoted(item, 1),
          prefix: false,
        })),
      ),
    ];
    if (asked.length === 0) sampled('every event');
    const literal = (entry: Emitted): string | undefined =>
      entry.fragments.length === 1 && !entry.pattern.source.includes('.+') ? entry.fragments[0] : undefined;
    for (const { name, prefix } of asked) {
      const names = prefix
        ? catalogue.events
            .map((entry) => literal(entry) ?? `${entry.fragments[0]}…`)
            .filter((one) => one.startsWith(name))
        : [name];
      for (const one of names.filter((candidate) => !catalogue.unsampledEvents.has(candidate)))
        sampled(`the event ${JSON.stringify(one)}`);
    }
  }
  if (reads('customMetrics') && /\bvalue(?:Max|Min)\b/.test(text)) {
    const names = [...text.matchAll(new RegExp(String.raw`\bname\s*==\s*${QUOTED}`, 'g'))].map((match) =>
      quoted(match, 1),
    );
    for (const name of names.filter((one) => !catalogue.distributionMetrics.has(one)))
      problems.push(
        `${query.where}: ${name} is a counter: its valueMax and valueMin are of one export's sum`,
      );
  }
  return problems;
}

/**
 * The platform metrics charted or alerted on, with their dimensions, as Microsoft Learn lists them:
 * "Supported metrics - Microsoft.ServiceBus/Namespaces" (ActiveMessages and DeadletteredMessages:
 * Average, Minimum, Maximum, by EntityName; not exportable by diagnostic settings) and "Supported
 * metrics - Microsoft.DocumentDB/DatabaseAccounts" (TotalRequests: Count, by DatabaseName,
 * CollectionName, Region, StatusCode, OperationType, Status, CapacityType).
 */
const PLATFORM_METRICS: Record<string, Record<string, string[]>> = {
  'microsoft.servicebus/namespaces': {
    ActiveMessages: ['EntityName'],
    DeadletteredMessages: ['EntityName'],
  },
  'microsoft.documentdb/databaseaccounts': {
    TotalRequests: [
      'DatabaseName',
      'CollectionName',
      'Region',
      'StatusCode',
      'OperationType',
      'Status',
      'CapacityType',
    ],
  },
};

export function platformMetricProblems(
  where: string,
  namespace: string,
  metric: string,
  dimensions: readonly string[],
): string[] {
  const known = PLATFORM_METRICS[namespace.toLowerCase()]?.[metric];
  if (known === undefined) return [`${where}: ${namespace} has no metric ${metric} (PLATFORM_METRICS)`];
  return dimensions
    .filter((dimension) => !known.includes(dimension))
    .map((dimension) => `${where}: ${namespace} ${metric} has no dimension ${dimension}`);
}

// ---------------------------------------------------------------------------------------------
// The queries of the workbook, the alerts and the runbook

interface Sources {
  queries: Query[];
  metrics: Array<{ where: string; namespace: string; metric: string; dimensions: string[] }>;
}

export function workbookSources(json: string, where: string): Sources {
  const sources: Sources = { queries: [], metrics: [] };
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, `${path}[${index}]`));
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const record = value as Record<string, unknown>;
    const name = typeof record.name === 'string' ? record.name : path;
    const content = record.content as Record<string, unknown> | undefined;
    if (record.type === 3 && typeof content?.query === 'string')
      sources.queries.push({ where: `${where} ${name}`, text: content.query });
    if (record.type === 10 && Array.isArray(content?.metrics)) {
      for (const metric of content.metrics as Array<Record<string, unknown>>) {
        const id = String(metric.metric);
        const namespace = String(metric.namespace);
        const split = metric.splitBy;
        sources.metrics.push({
          where: `${where} ${name}`,
          namespace,
          // `<namespace>-<category>-<metric>`, the category empty for Service Bus.
          metric: id.slice(id.lastIndexOf('-') + 1),
          dimensions: split === undefined || split === null ? [] : ([] as string[]).concat(split as string),
        });
      }
    }
    for (const [key, child] of Object.entries(record)) walk(child, key === 'items' ? path : `${path}.${key}`);
  };
  walk(JSON.parse(json), '');
  return sources;
}

export function bicepSources(text: string, where: string): Sources {
  const sources: Sources = { queries: [], metrics: [] };
  const line = (index: number): number => text.slice(0, index).split('\n').length;
  for (const match of text.matchAll(/'''([\s\S]*?)'''/g))
    sources.queries.push({ where: `${where}:${line(match.index ?? 0)}`, text: match[1] });
  for (const match of text.matchAll(/\bquery:\s*'((?:[^'\\\n]|\\.)*)'/g))
    sources.queries.push({
      where: `${where}:${line(match.index ?? 0)}`,
      text: match[1].replace(/\\(.)/g, '$1'),
    });
  // A metric criterion: its namespace, metric and dimension names, in that order.
  for (const match of text.matchAll(
    /metricNamespace:\s*'([^']+)'\s*metricName:\s*'([^']+)'([\s\S]*?)(?=operator: '(?:GreaterThan|LessThan))/g,
  )) {
    const dimensions = [...match[3].matchAll(/\bname:\s*'([^']+)'/g)].map((dimension) => dimension[1]);
    sources.metrics.push({
      where: `${where}:${line(match.index ?? 0)}`,
      namespace: match[1],
      metric: match[2],
      dimensions,
    });
  }
  return sources;
}

export function markdownSources(text: string, where: string): Sources {
  const queries = [...text.matchAll(/```kusto\n([\s\S]*?)```/g)].map((match) => ({
    where: `${where}:${text.slice(0, match.index).split('\n').length}`,
    text: match[1],
  }));
  return { queries, metrics: [] };
}

function problemsOf(sources: Sources, catalogue: Catalogue): string[] {
  return [
    ...sources.queries.flatMap((query) => queryProblems(query, catalogue)),
    ...sources.metrics.flatMap((metric) =>
      platformMetricProblems(metric.where, metric.namespace, metric.metric, metric.dimensions),
    ),
  ];
}

const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const WORKBOOK = workbookSources(
  read('bicep/workbooks/operations.workbook.json'),
  'operations.workbook.json',
);
const ALERTS = bicepSources(read('bicep/modules/alerts.bicep'), 'alerts.bicep');
const RUNBOOK = markdownSources(read('docs/operations.md'), 'docs/operations.md');

describe('the names the operations queries use are names the app emits', () => {
  const catalogue = readCatalogue();

  it('reads what the app emits from src/, union-typed names expanded', () => {
    const names = (entries: Emitted[]): string[] => entries.map((entry) => entry.pattern.source);
    expect(names(catalogue.metrics)).toEqual(
      expect.arrayContaining(['^entries\\.applied$', '^messages\\.parked$', '^store\\.requestCharge$']),
    );
    expect(names(catalogue.metrics)).toContain('^saga\\.operation\\.retrying$');
    expect(names(catalogue.events)).toEqual(
      expect.arrayContaining(['^Saga\\.needs-attention$', '^Saga\\.completed$', '^AuthorizationPending$']),
    );
    expect(catalogue.metricDimensions).toEqual(new Set(['reason', 'queue', 'operation', 'outcome']));
    expect(names(catalogue.requests)).toEqual(
      expect.arrayContaining(['^process order-transactions$', '^process ledger$', '^activity .+$']),
    );
    expect(names(catalogue.dependencies)).toEqual(expect.arrayContaining(['^send .+$', '^start .+$']));
    expect([...catalogue.attributes]).toEqual(
      expect.arrayContaining(['order.id', 'order.entry.outcome', 'messaging.destination.name', 'faas.name']),
    );
    expect(catalogue.values.get('order.entry.outcome')).toEqual(
      new Set(['applied', 'buffered', 'rejected', 'duplicate', 'parked']),
    );
  });

  it('finds the queries and metrics of the workbook, the alerts and the runbook', () => {
    expect(WORKBOOK.queries.length).toBeGreaterThanOrEqual(15);
    expect(WORKBOOK.metrics.map((metric) => metric.metric)).toEqual(
      expect.arrayContaining(['ActiveMessages', 'DeadletteredMessages', 'TotalRequests']),
    );
    expect(ALERTS.queries.length).toBeGreaterThanOrEqual(7);
    expect(ALERTS.metrics.map((metric) => metric.metric)).toEqual(
      expect.arrayContaining(['ActiveMessages', 'DeadletteredMessages', 'TotalRequests']),
    );
    expect(RUNBOOK.queries.length).toBeGreaterThanOrEqual(8);
  });

  it.each([
    ['the workbook', WORKBOOK],
    ['the alerts', ALERTS],
    ['docs/operations.md', RUNBOOK],
  ])('%s asks only for names, keys, values and texts the app emits', (_name, sources) => {
    expect(problemsOf(sources, catalogue)).toEqual([]);
  });

  it('the alerts read nothing sampling may drop', () => {
    expect(ALERTS.queries.flatMap((query) => samplingProblems(query, catalogue, 'alert'))).toEqual([]);
  });

  it('the workbook weighs by itemCount what sampling may drop, and reads no absence from it', () => {
    expect(WORKBOOK.queries.flatMap((query) => samplingProblems(query, catalogue, 'chart'))).toEqual([]);
  });

  it('the runbook weighs by itemCount what sampling may drop, and reads no absence from it', () => {
    expect(RUNBOOK.queries.flatMap((query) => samplingProblems(query, catalogue, 'chart'))).toEqual([]);
  });

  it('fails on an alert that reads sampled rows, and on a chart that counts them unweighted', () => {
    const alert = (text: string): string[] => samplingProblems({ where: 'q', text }, catalogue, 'alert');
    const chart = (text: string): string[] => samplingProblems({ where: 'q', text }, catalogue, 'chart');
    expect(catalogue.unsampledEvents).toContain('Saga.completed');
    expect(catalogue.distributionMetrics).toContain('messages.waitMs');
    // Spans: only the failed rows are all there.
    expect(alert('requests | where success == false | summarize count() by name')).toEqual([]);
    expect(alert('requests | summarize n = count(), failed = countif(success == false)')).toHaveLength(1);
    expect(alert("requests | where name == 'process order-transactions' | summarize count()")).toHaveLength(
      1,
    );
    expect(alert('dependencies | where success == true | summarize count()')).toHaveLength(1);
    expect(chart('requests | summarize n = sum(itemCount) by name')).toEqual([]);
    expect(chart('requests | summarize n = count() by name')).toHaveLength(1);
    expect(chart('requests | summarize p = percentiles(duration, 50, 95)')).toHaveLength(1);
    expect(chart('requests | summarize p = percentilesw(duration, itemCount, 50, 95)')).toEqual([]);
    expect(
      chart(
        'let d = requests | project id; dependencies | join kind=leftanti d on id | summarize sum(itemCount)',
      ),
    ).toHaveLength(2);
    // Events: those an alert counts are exported whatever the sampling; a park's is not.
    expect(alert("customEvents | where name startswith 'Saga.' | summarize count()")).toEqual([]);
    expect(alert("customEvents | where name == 'MessageParked' | summarize count()")).toHaveLength(1);
    expect(alert('customEvents | summarize count()')).toHaveLength(1);
    // Traces: warnings and errors are; information is not.
    expect(alert("traces | where message startswith 'transient failure;'")).toEqual([]);
    expect(alert("traces | where message startswith 'ledger batch forwarded'")).toHaveLength(1);
    expect(alert('traces | where severityLevel >= 2')).toEqual([]);
    // Metrics: never sampled; a maximum only of a distribution.
    expect(alert("customMetrics | where name == 'messages.waitMs' | summarize max(valueMax)")).toEqual([]);
    expect(alert("customMetrics | where name == 'entries.applied' | summarize max(valueMax)")).toHaveLength(
      1,
    );
  });

  it('fails on a misspelled name, key, value, message or metric', () => {
    const problems = (text: string): string[] => queryProblems({ where: 'q', text }, catalogue);
    const good =
      "customMetrics | where name == 'messages.parked' | extend r = tostring(customDimensions.reason)";
    expect(problems(good)).toEqual([]);
    expect(problems("customMetrics | where name == 'entries.aplied'")).toEqual([
      'q: no customMetrics name "entries.aplied" is emitted',
    ]);
    expect(problems("customEvents | where name in ('Saga.completed', 'Saga.complete')")).toHaveLength(1);
    expect(problems("customEvents | where name startswith 'Sagas.'")).toHaveLength(1);
    // A metric keeps only the dimensions of METRIC_DIMENSIONS: an order id is on the event only.
    expect(
      problems("customMetrics | where name == 'messages.parked' | extend m = customDimensions.messageId"),
    ).toHaveLength(1);
    expect(
      problems("customEvents | where name == 'MessageParked' | extend m = customDimensions.messageId"),
    ).toEqual([]);
    expect(
      problems("customMetrics | where name == 'messages.parked' | extend r = customDimensions.reasn"),
    ).toHaveLength(1);
    expect(
      problems("requests | where tostring(customDimensions['order.entry.outcom']) == 'applied'"),
    ).toHaveLength(1);
    expect(
      problems("requests | where tostring(customDimensions['order.entry.outcome']) == 'aplied'"),
    ).toHaveLength(1);
    expect(problems("requests | where name == 'process order-transactions'")).toEqual([]);
    // An HTTP function's row is named by its method and route, which are not known statically
    // (`.+ .+`): a request name of another form is caught.
    expect(problems("requests | where name == 'process-ledger'")).toHaveLength(1);
    expect(problems("dependencies | where name == 'send order-transactions'")).toEqual([]);
    expect(problems("dependencies | where name == 'sent order-transactions'")).toHaveLength(1);
    expect(problems("traces | where message startswith 'transient failures;'")).toHaveLength(1);
    expect(problems("traces | where message startswith 'transient failure;'")).toEqual([]);
    expect(problems("traces | where message == 'transient failure; trying again'")).toHaveLength(1);
    expect(
      problems(
        "customEvents | extend r = tostring(customDimensions.reason) | where r has 'failed afterwards'",
      ),
    ).toHaveLength(1);
    expect(
      platformMetricProblems('m', 'Microsoft.ServiceBus/namespaces', 'DeadLetteredMessages', []),
    ).toHaveLength(1);
    expect(
      platformMetricProblems('m', 'Microsoft.ServiceBus/namespaces', 'ActiveMessages', ['Entity']),
    ).toHaveLength(1);
  });

  it('reads queries and metric criteria out of Bicep and workbook JSON as they are written', () => {
    const bicep = [
      "query: 'customEvents | where name == \\'Saga.complete\\''",
      "query: format('''",
      "customMetrics | where name == 'entries.aplied' and timestamp > ago({0}m)",
      "''', minutes)",
      "metricNamespace: 'Microsoft.ServiceBus/namespaces'",
      "metricName: 'ActiveMessage'",
      "dimensions: [ { name: 'EntityName' } ]",
      "operator: 'GreaterThan'",
    ].join('\n');
    const sources = bicepSources(bicep, 'b');
    expect(sources.queries.map((query) => query.text.trim())).toEqual([
      "customMetrics | where name == 'entries.aplied' and timestamp > ago({0}m)",
      "customEvents | where name == 'Saga.complete'",
    ]);
    expect(problemsOf(sources, catalogue)).toHaveLength(3);
    const workbook = JSON.stringify({
      items: [
        { type: 3, content: { query: "customEvents | where name == 'Saga.complete'" }, name: 'q' },
        {
          type: 10,
          content: {
            metrics: [
              {
                namespace: 'microsoft.documentdb/databaseaccounts',
                metric: 'microsoft.documentdb/databaseaccounts-Requests-TotalRequest',
                splitBy: 'StatusCode',
              },
            ],
          },
          name: 'm',
        },
      ],
    });
    expect(problemsOf(workbookSources(workbook, 'w'), catalogue)).toHaveLength(2);
  });
});
