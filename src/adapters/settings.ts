/**
 * Every app setting the code reads, read once at start, typed and validated (docs/architecture.md decision 8).
 * A missing or malformed setting fails with a ConfigurationError that names it.
 */
import { ConfigurationError } from '../domain/errors';
import { ownValue, setOwn } from '../domain/own-properties';
import { DEFAULT_MAX_MESSAGE_BYTES, parseMaxMessageBytes } from '../services/message-size';

export interface RetrySettings {
  firstIntervalMs: number;
  backoffCoefficient: number;
  maxIntervalMs: number;
  maxAttempts: number;
}

export interface FulfillmentSettings {
  /** Stock per sku the built-in inventory starts from; a sku not listed has none. */
  catalog: Record<string, number>;
  /** The most one charge may be, in minor units. */
  creditLimit: number;
  cancellationFeePercent: number;
  retry: RetrySettings;
  /** How long a saga in needs-attention waits for a person before it alerts again. */
  reviewTimeoutMinutes: number;
}

export interface Settings {
  serviceBusNamespace: string;
  cosmosEndpoint: string;
  cosmosDatabase: string;
  /** Client id of the user-assigned managed identity; unset for a developer's own credential. */
  managedIdentityClientId: string | undefined;
  taskHubName: string;
  applicationInsightsConnectionString: string | undefined;
  /**
   * The queues' duplicate-detection window (all three share the Bicep's parameter), which a replay
   * must respect; a setting, so that replay needs no Manage right to read it from the broker.
   */
  duplicateDetectionWindowMs: number;
  /**
   * The queues' message size limit, which depends on the Service Bus tier (src/services/message-size.ts):
   * the Bicep writes it from its `serviceBusSku`, and the ledger parks an entry that would not fit.
   */
  maxMessageBytes: number;
  /**
   * The share of orders whose whole trace (spans, information-level log records) is exported to
   * Application Insights, between 0 and 1 (src/adapters/tracing.ts `OrderSampler`); metrics,
   * events, warnings and errors are exported whatever it is.
   */
  telemetrySamplingRatio: number;
  fulfillment: FulfillmentSettings;
}

/** Names of the settings, as the Function App and local.settings.json spell them. */
export const SETTING = {
  serviceBusNamespace: 'ServiceBusConnection__fullyQualifiedNamespace',
  cosmosEndpoint: 'CosmosDb__accountEndpoint',
  cosmosDatabase: 'CosmosDb__databaseName',
  managedIdentityClientId: 'AZURE_CLIENT_ID',
  taskHubName: 'DURABLE_TASK_HUB_NAME',
  applicationInsightsConnectionString: 'APPLICATIONINSIGHTS_CONNECTION_STRING',
  catalog: 'INVENTORY_CATALOG',
  creditLimit: 'PAYMENT_CREDIT_LIMIT',
  cancellationFeePercent: 'CANCELLATION_FEE_PERCENT',
  retryFirstIntervalMs: 'RETRY_FIRST_INTERVAL_MS',
  retryBackoffCoefficient: 'RETRY_BACKOFF_COEFFICIENT',
  retryMaxIntervalMs: 'RETRY_MAX_INTERVAL_MS',
  retryMaxAttempts: 'RETRY_MAX_ATTEMPTS',
  reviewTimeoutMinutes: 'REVIEW_TIMEOUT_MINUTES',
  duplicateDetectionWindow: 'SERVICE_BUS_DUPLICATE_DETECTION_WINDOW',
  maxMessageBytes: 'SERVICE_BUS_MAX_MESSAGE_BYTES',
  telemetrySamplingRatio: 'TELEMETRY_SAMPLING_RATIO',
} as const;

export const DEFAULTS = {
  cosmosDatabase: 'orderpipeline',
  taskHubName: 'orderfulfillment',
  creditLimit: 100_000,
  cancellationFeePercent: 10,
  retry: { firstIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 30_000, maxAttempts: 5 },
  reviewTimeoutMinutes: 24 * 60,
  /** ISO 8601, as the Bicep's duplicateDetectionHistoryTimeWindow. */
  duplicateDetectionWindow: 'PT1H',
  /** What keeps `npm start`'s `stats.telemetry.bytesPerEntry` within docs/performance.md's bound. */
  telemetrySamplingRatio: 0.01,
} as const;

const DURATION =
  /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** An ISO 8601 duration as Service Bus writes them (`PT1H`, `P1DT10M`) in ms; null when it is not one. */
export function isoDurationMs(duration: string): number | null {
  const match = DURATION.exec(duration);
  if (match === null || duration === 'P' || duration.endsWith('T')) return null;
  const [days, hours, minutes, seconds] = match.slice(1).map((part) => Number(part ?? 0));
  return Math.round((((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000);
}

/** Service Bus allows a duplicate-detection window of 20 seconds to 7 days (Microsoft.ServiceBus queues API). */
function duplicateWindowMs(env: Readonly<Record<string, string | undefined>>): number {
  const name = SETTING.duplicateDetectionWindow;
  const raw = env[name]?.trim() || DEFAULTS.duplicateDetectionWindow;
  const ms = isoDurationMs(raw);
  if (ms === null || ms < 20_000 || ms > 7 * 24 * 3600 * 1000) {
    throw new ConfigurationError(
      name,
      `must be an ISO 8601 duration from PT20S to P7D such as PT1H, got ${JSON.stringify(raw)}`,
    );
  }
  return ms;
}

type Environment = Readonly<Record<string, string | undefined>>;

function maxMessageBytes(env: Environment): number {
  const raw = optional(env, SETTING.maxMessageBytes);
  if (raw === undefined) return DEFAULT_MAX_MESSAGE_BYTES;
  const parsed = parseMaxMessageBytes(raw);
  if (!parsed.ok) throw new ConfigurationError(SETTING.maxMessageBytes, parsed.problem);
  return parsed.value;
}

function required(env: Environment, name: string): string {
  const value = ownValue(env, name)?.trim();
  if (!value) throw new ConfigurationError(name, 'is required but not set');
  return value;
}

function optional(env: Environment, name: string): string | undefined {
  const value = ownValue(env, name)?.trim();
  return value ? value : undefined;
}

function httpsUrl(env: Environment, name: string): string {
  const value = required(env, name);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigurationError(name, `must be an https URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'https:')
    throw new ConfigurationError(name, `must be an https URL, got ${JSON.stringify(value)}`);
  return value;
}

function hostName(env: Environment, name: string): string {
  const value = required(env, name);
  if (!/^[a-z0-9][a-z0-9-]*(\.[a-z0-9-]+)+$/i.test(value)) {
    throw new ConfigurationError(
      name,
      `must be a fully qualified host name such as myns.servicebus.windows.net, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

export function numberSetting(
  env: Environment,
  name: string,
  fallback: number,
  rule: { min: number; max?: number; integer?: boolean },
): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  const bounds = rule.max === undefined ? `>= ${rule.min}` : `between ${rule.min} and ${rule.max}`;
  const kind = rule.integer === false ? 'a number' : 'an integer';
  if (
    !Number.isFinite(value) ||
    (rule.integer !== false && !Number.isInteger(value)) ||
    value < rule.min ||
    (rule.max !== undefined && value > rule.max)
  ) {
    throw new ConfigurationError(name, `must be ${kind} ${bounds}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

export function parseCatalog(raw: string | undefined, name: string): Record<string, number> {
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigurationError(name, 'must be a JSON object of sku to stock, e.g. {"SKU-1": 100}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigurationError(name, 'must be a JSON object of sku to stock, e.g. {"SKU-1": 100}');
  }
  const catalog: Record<string, number> = {};
  for (const [sku, stock] of Object.entries(parsed)) {
    if (typeof stock !== 'number' || !Number.isSafeInteger(stock) || stock < 0) {
      throw new ConfigurationError(
        name,
        `stock of ${sku} must be an integer >= 0, got ${JSON.stringify(stock)}`,
      );
    }
    setOwn(catalog, sku, stock);
  }
  return catalog;
}

/** The fulfillment settings alone: the embedded run takes them from flags, Azure from app settings. */
export function readFulfillmentSettings(env: Environment): FulfillmentSettings {
  return {
    catalog: parseCatalog(optional(env, SETTING.catalog), SETTING.catalog),
    creditLimit: numberSetting(env, SETTING.creditLimit, DEFAULTS.creditLimit, { min: 0 }),
    cancellationFeePercent: numberSetting(
      env,
      SETTING.cancellationFeePercent,
      DEFAULTS.cancellationFeePercent,
      {
        min: 0,
        max: 100,
      },
    ),
    retry: {
      firstIntervalMs: numberSetting(env, SETTING.retryFirstIntervalMs, DEFAULTS.retry.firstIntervalMs, {
        min: 1,
      }),
      backoffCoefficient: numberSetting(
        env,
        SETTING.retryBackoffCoefficient,
        DEFAULTS.retry.backoffCoefficient,
        {
          min: 1,
          integer: false,
        },
      ),
      maxIntervalMs: numberSetting(env, SETTING.retryMaxIntervalMs, DEFAULTS.retry.maxIntervalMs, { min: 1 }),
      maxAttempts: numberSetting(env, SETTING.retryMaxAttempts, DEFAULTS.retry.maxAttempts, {
        min: 1,
        max: 100,
      }),
    },
    reviewTimeoutMinutes: numberSetting(env, SETTING.reviewTimeoutMinutes, DEFAULTS.reviewTimeoutMinutes, {
      min: 1,
    }),
  };
}

/** `TELEMETRY_SAMPLING_RATIO`: a number from 0 to 1, the default unless set. */
export function readSamplingRatio(env: Environment): number {
  return numberSetting(env, SETTING.telemetrySamplingRatio, DEFAULTS.telemetrySamplingRatio, {
    min: 0,
    max: 1,
    integer: false,
  });
}

/** Reads and validates every setting the app uses on Azure (or under `func start`). */
export function readSettings(env: Environment): Settings {
  const settings: Settings = {
    serviceBusNamespace: hostName(env, SETTING.serviceBusNamespace),
    cosmosEndpoint: httpsUrl(env, SETTING.cosmosEndpoint),
    cosmosDatabase: optional(env, SETTING.cosmosDatabase) ?? DEFAULTS.cosmosDatabase,
    managedIdentityClientId: optional(env, SETTING.managedIdentityClientId),
    taskHubName: optional(env, SETTING.taskHubName) ?? DEFAULTS.taskHubName,
    applicationInsightsConnectionString: optional(env, SETTING.applicationInsightsConnectionString),
    duplicateDetectionWindowMs: duplicateWindowMs(env),
    maxMessageBytes: maxMessageBytes(env),
    telemetrySamplingRatio: readSamplingRatio(env),
    fulfillment: readFulfillmentSettings(env),
  };
  if (!/^[A-Za-z][A-Za-z0-9]{2,44}$/.test(settings.taskHubName)) {
    throw new ConfigurationError(
      SETTING.taskHubName,
      `must be 3 to 45 letters and digits starting with a letter, got ${JSON.stringify(settings.taskHubName)}`,
    );
  }
  return settings;
}
