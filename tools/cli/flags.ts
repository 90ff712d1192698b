/**
 * The one flag parser of the three commands (`npm start`, `npm run ops`, `npm run bench`): Node's
 * own `util.parseArgs` in strict mode, with one table per command that also writes its `--help`,
 * and value checks that name the flag. Every problem is a `UsageError`: one line, exit 2.
 */
import { parseArgs } from 'node:util';

export class UsageError extends Error {}

/** A plain decimal (`12`, `0.5`, `.5`), else NaN: no sign, exponent, hex or blank. */
export function decimalNumber(raw: string | undefined): number {
  return raw !== undefined && /^(\d+(\.\d*)?|\.\d+)$/.test(raw) ? Number(raw) : Number.NaN;
}

export interface FlagSpec {
  /** Without the dashes: `max-concurrent-sessions`. */
  name: string;
  /** The value's placeholder in the help (`N`, `FILE`); absent for a switch that takes no value. */
  value?: string;
  meaning: string;
  /** What applies when the flag is not given, as the help says it. */
  default?: string;
  short?: string;
}

export interface ParsedFlags {
  /** A string for a flag with a value, `true` for a switch; only the flags given. */
  values: ReadonlyMap<string, string | true>;
  positionals: string[];
}

function quotedName(message: string): string {
  const match = /'([^']*)'/.exec(message);
  return match === null ? '' : match[1].split(' ')[0];
}

/**
 * Parses `argv` against `specs`. A flag not in the table, a word where none is expected, a flag
 * given twice, a missing or empty value, or a value given to a switch is a usage error.
 */
export function parseFlags(
  specs: readonly FlagSpec[],
  argv: readonly string[],
  settings: { command: string; allowPositionals?: boolean },
): ParsedFlags {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const spec of specs) {
    options[spec.name] = {
      type: spec.value === undefined ? 'boolean' : 'string',
      ...(spec.short === undefined ? {} : { short: spec.short }),
    };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: settings.allowPositionals ?? false,
      tokens: true,
    });
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      throw new UsageError(`unknown flag ${quotedName(message)} (${settings.command} -- --help lists them)`);
    }
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new UsageError(
        `unexpected argument "${quotedName(message)}": ${settings.command} takes flags only (${settings.command} -- --help lists them)`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const flag = quotedName(message);
      if (/does not take an argument/.test(message)) throw new UsageError(`${flag} takes no value`);
      if (/ambiguous/.test(message)) {
        throw new UsageError(`${flag} needs a value (one that starts with "-" is written ${flag}=VALUE)`);
      }
      throw new UsageError(`${flag} needs a value`);
    }
    throw error;
  }
  const values = new Map<string, string | true>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option') continue;
    if (values.has(token.name)) throw new UsageError(`--${token.name} is given twice; give it once`);
    if (token.value === undefined) {
      values.set(token.name, true);
      continue;
    }
    if (token.value === '') throw new UsageError(`--${token.name} needs a value`);
    values.set(token.name, token.value);
  }
  return { values, positionals: parsed.positionals };
}

/** A string flag's value, when given. */
export function stringFlag(parsed: ParsedFlags, name: string): string | undefined {
  const value = parsed.values.get(name);
  return typeof value === 'string' ? value : undefined;
}

const DECIMAL_INTEGER = /^\d+$/;

/**
 * A decimal integer of at least `min` and at most `max` (no sign, exponent, hex or fraction), or a
 * usage error naming the flag.
 */
export function integerFlag(flag: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = DECIMAL_INTEGER.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${flag} must be a decimal integer ${range}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** A decimal number >= 0, or a usage error naming the flag. */
export function nonNegativeFlag(flag: string, raw: string): number {
  const value = decimalNumber(raw);
  if (!Number.isFinite(value)) {
    throw new UsageError(`${flag} must be a decimal number >= 0, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** A probability written as a decimal between 0 and 1, or a usage error naming the flag. */
export function probabilityFlag(flag: string, raw: string): number {
  const value = decimalNumber(raw);
  if (!(value >= 0 && value <= 1)) {
    throw new UsageError(`${flag} must be a decimal probability between 0 and 1, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** `--help`: every flag with its meaning and default, one a line. */
export function flagHelp(usage: string, specs: readonly FlagSpec[], footer = ''): string {
  const names = specs.map(
    (spec) =>
      `${spec.short === undefined ? '' : `-${spec.short}, `}--${spec.name}${spec.value === undefined ? '' : ` ${spec.value}`}`,
  );
  const width = Math.max(...names.map((name) => name.length));
  const lines = specs.map((spec, index) => {
    const fallback = spec.default === undefined ? '' : ` (default: ${spec.default})`;
    return `  ${names[index].padEnd(width)}  ${spec.meaning}${fallback}`;
  });
  return [usage, '', ...lines, ...(footer === '' ? [] : ['', footer])].join('\n');
}
