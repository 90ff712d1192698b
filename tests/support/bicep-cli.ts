/**
 * The real Bicep compiler, found and run. The CLI comes from the NuGet package
 * Azure.Bicep.CommandLine.linux-x64 (scripts/fetch-bicep.sh restores tools/bicep/bicep-cli.csproj,
 * which pins the version); a developer's own install is used first when there is one.
 *
 * Search order: the BICEP_PATH setting, `bicep` on PATH, `~/.azure/bin/bicep` (where
 * `az bicep install` puts it), then the NuGet cache
 * (`$NUGET_PACKAGES` or `~/.nuget/packages`)/azure.bicep.commandline.linux-x64/<version>/tools/bicep.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
const TOOLS_PROJECT = join(ROOT, 'tools', 'bicep', 'bicep-cli.csproj');

export interface Found {
  path: string;
  /** Which rule of the search order found it. */
  via: 'BICEP_PATH' | 'PATH' | '~/.azure/bin' | 'NuGet';
}

export interface SearchContext {
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  /** The pinned package version (tools/bicep/bicep-cli.csproj). */
  version: string;
  isExecutable(path: string): boolean;
}

export class BicepSettingError extends Error {
  override readonly name = 'BicepSettingError';
}

export function pinnedVersion(projectText: string = readFileSync(TOOLS_PROJECT, 'utf8')): string {
  const match = /<BicepVersion>([^<]+)<\/BicepVersion>/.exec(projectText);
  if (!match) throw new BicepSettingError(`${TOOLS_PROJECT} has no <BicepVersion>`);
  return match[1].trim();
}

export function findBicep(ctx: SearchContext): Found | null {
  const explicit = ctx.env.BICEP_PATH;
  if (explicit !== undefined && explicit !== '') {
    // A setting that names nothing is a mistake to report, not a reason to look elsewhere.
    if (!ctx.isExecutable(explicit)) {
      throw new BicepSettingError(`BICEP_PATH=${explicit} is not an executable file`);
    }
    return { path: explicit, via: 'BICEP_PATH' };
  }
  for (const dir of (ctx.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'bicep');
    if (ctx.isExecutable(candidate)) return { path: candidate, via: 'PATH' };
  }
  const azure = join(ctx.home, '.azure', 'bin', 'bicep');
  if (ctx.isExecutable(azure)) return { path: azure, via: '~/.azure/bin' };
  const packages = ctx.env.NUGET_PACKAGES || join(ctx.home, '.nuget', 'packages');
  const nuget = join(packages, 'azure.bicep.commandline.linux-x64', ctx.version, 'tools', 'bicep');
  if (ctx.isExecutable(nuget)) return { path: nuget, via: 'NuGet' };
  return null;
}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findInstalledBicep(): Found | null {
  return findBicep({ env: process.env, home: homedir(), version: pinnedVersion(), isExecutable });
}

export interface Diagnostic {
  file: string;
  line: number;
  column: number;
  level: 'Error' | 'Warning' | 'Info';
  code: string;
  message: string;
}

/** `<file>(<line>,<col>) : <Level> <code>: <message>`, the CLI's default diagnostics format. */
const DIAGNOSTIC = /^(.+)\((\d+),(\d+)\) : (Error|Warning|Info) ([^:]+): (.*)$/;

export function parseDiagnostics(output: string): Diagnostic[] {
  const result: Diagnostic[] = [];
  for (const line of output.split(/\r?\n/)) {
    const m = DIAGNOSTIC.exec(line.trim());
    if (!m) continue;
    result.push({
      file: m[1],
      line: Number(m[2]),
      column: Number(m[3]),
      level: m[4] as Diagnostic['level'],
      code: m[5],
      message: m[6],
    });
  }
  return result;
}

export interface RunResult {
  command: string;
  status: number | null;
  diagnostics: Diagnostic[];
  /** Output that is neither a diagnostic nor empty, kept to explain a failure. */
  other: string;
}

export function runBicep(cli: string, args: readonly string[], cwd: string = ROOT): RunResult {
  const run = spawnSync(cli, args, {
    cwd,
    encoding: 'utf8',
    // No telemetry; the CLI needs nothing from the network for local files.
    env: { ...process.env, BICEP_TRACING_ENABLED: 'false', DOTNET_CLI_TELEMETRY_OPTOUT: '1' },
    timeout: 120_000,
  });
  const text = `${run.stderr ?? ''}\n${args.includes('--stdout') ? '' : (run.stdout ?? '')}`;
  const diagnostics = parseDiagnostics(text);
  const other = text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '' && !DIAGNOSTIC.test(line.trim()))
    .join('\n');
  if (run.error)
    return { command: `bicep ${args.join(' ')}`, status: null, diagnostics, other: String(run.error) };
  return { command: `bicep ${args.join(' ')}`, status: run.status, diagnostics, other };
}

/** What a clean run means: exit 0 and no error or warning (Info is allowed). */
export function problemsOf(result: RunResult): string[] {
  const problems = result.diagnostics
    .filter((d) => d.level !== 'Info')
    .map((d) => `${d.file}(${d.line},${d.column}) ${d.level} ${d.code}: ${d.message}`);
  if (result.status !== 0) {
    problems.push(
      `${result.command} exited ${String(result.status)}${result.other ? `: ${result.other}` : ''}`,
    );
  }
  return problems;
}
