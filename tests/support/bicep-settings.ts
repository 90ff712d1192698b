/**
 * What the Bicep writes into one app setting for a given Service Bus tier, read from its text: the
 * `maxMessageBytesBySku` table of bicep/main.bicep, the module parameter it feeds, and the app
 * setting of bicep/modules/functionapp.bicep that carries it. Throws, naming the link, when the
 * chain from `serviceBusSku` to SERVICE_BUS_MAX_MESSAGE_BYTES is broken.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const BICEP = join(__dirname, '..', '..', 'bicep');

export interface BicepTexts {
  main: string;
  functionApp: string;
}

export function readBicepTexts(): BicepTexts {
  return {
    main: readFileSync(join(BICEP, 'main.bicep'), 'utf8'),
    functionApp: readFileSync(join(BICEP, 'modules', 'functionapp.bicep'), 'utf8'),
  };
}

/** The `Tier: bytes` pairs of main.bicep's `var maxMessageBytesBySku = { ... }`. */
export function maxMessageBytesBySku(main: string): Map<string, number> {
  const table = /var maxMessageBytesBySku = \{([^}]*)\}/.exec(main);
  if (table === null) throw new Error('main.bicep has no var maxMessageBytesBySku = { ... }');
  return new Map([...table[1].matchAll(/(\w+):\s*(\d+)/g)].map(([, tier, bytes]) => [tier, Number(bytes)]));
}

/** SERVICE_BUS_MAX_MESSAGE_BYTES as the Function App gets it when the namespace is of `tier`. */
export function maxMessageBytesSettingFor(tier: 'Standard' | 'Premium', texts = readBicepTexts()): string {
  const bytes = maxMessageBytesBySku(texts.main).get(tier);
  if (bytes === undefined) throw new Error(`main.bicep's maxMessageBytesBySku has no ${tier}`);
  if (!/serviceBusMaxMessageBytes:\s*maxMessageBytesBySku\[effectiveServiceBusSku\]/.test(texts.main))
    throw new Error(
      'main.bicep does not pass maxMessageBytesBySku[effectiveServiceBusSku] to the Function App',
    );
  if (
    !/name:\s*'SERVICE_BUS_MAX_MESSAGE_BYTES'\s*value:\s*string\(serviceBusMaxMessageBytes\)/.test(
      texts.functionApp,
    )
  )
    throw new Error(
      'functionapp.bicep does not write serviceBusMaxMessageBytes to SERVICE_BUS_MAX_MESSAGE_BYTES',
    );
  return String(bytes);
}
