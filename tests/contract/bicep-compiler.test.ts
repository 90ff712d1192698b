/**
 * The real Bicep compiler on bicep/: `bicep build` on main.bicep, `bicep build-params` on its
 * parameter file and `bicep lint` on both, failing on any error or warning (a warning left on
 * purpose is suppressed in the Bicep with `#disable-next-line <rule>` and a comment saying why).
 * tests/contract/bicep-consistency.test.ts checks what the compiler cannot: that Bicep and code agree.
 *
 * Without a CLI (tests/support/bicep-cli.ts says where it looks) the compiler tests are skipped
 * with a loud notice, except under CI=true, where a missing compiler fails: `.ci/run` runs
 * scripts/fetch-bicep.sh first.
 */
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BicepSettingError,
  findBicep,
  findInstalledBicep,
  parseDiagnostics,
  pinnedVersion,
  problemsOf,
  runBicep,
  type SearchContext,
} from '../support/bicep-cli';

describe('finding the Bicep CLI', () => {
  const base = (executables: string[], env: Record<string, string> = {}): SearchContext => ({
    env: { PATH: '/usr/local/bin:/usr/bin', ...env },
    home: '/home/dev',
    version: '0.49.2',
    isExecutable: (path) => executables.includes(path),
  });
  const nuget = '/home/dev/.nuget/packages/azure.bicep.commandline.linux-x64/0.49.2/tools/bicep';
  const all = ['/opt/bicep', '/usr/bin/bicep', '/home/dev/.azure/bin/bicep', nuget];

  it('takes BICEP_PATH, then PATH, then ~/.azure/bin, then the NuGet package', () => {
    expect(findBicep(base(all, { BICEP_PATH: '/opt/bicep' }))?.via).toBe('BICEP_PATH');
    expect(findBicep(base(all))).toEqual({ path: '/usr/bin/bicep', via: 'PATH' });
    expect(findBicep(base(all.slice(2)))).toEqual({
      path: '/home/dev/.azure/bin/bicep',
      via: '~/.azure/bin',
    });
    expect(findBicep(base([nuget]))).toEqual({ path: nuget, via: 'NuGet' });
    expect(findBicep(base([]))).toBeNull();
  });

  it('honours NUGET_PACKAGES and the pinned version only', () => {
    const moved = '/cache/azure.bicep.commandline.linux-x64/0.49.2/tools/bicep';
    expect(findBicep(base([moved], { NUGET_PACKAGES: '/cache' }))?.path).toBe(moved);
    expect(findBicep({ ...base([nuget]), version: '0.50.0' })).toBeNull();
  });

  it('reports a BICEP_PATH that names no executable instead of looking elsewhere', () => {
    expect(() => findBicep(base(all, { BICEP_PATH: '/nowhere/bicep' }))).toThrow(BicepSettingError);
    expect(() => findBicep(base(all, { BICEP_PATH: '/nowhere/bicep' }))).toThrow(/BICEP_PATH/);
  });

  it('reads the version the tools project pins', () => {
    expect(pinnedVersion('<Project><BicepVersion> 0.49.2 </BicepVersion></Project>')).toBe('0.49.2');
    expect(() => pinnedVersion('<Project/>')).toThrow(/BicepVersion/);
    expect(pinnedVersion()).toMatch(/^0\.49\.\d+$/);
  });
});

describe('reading the compiler output', () => {
  it('turns every error and warning line into a problem, and a non-zero exit too', () => {
    const output = [
      '/r/bicep/main.bicep(12,7) : Warning no-unused-params: Parameter "x" is declared but never used. [https://aka.ms/bicep/linter-diagnostics#no-unused-params]',
      '/r/bicep/modules/a.bicep(3,1) : Error BCP018: Expected the "=" character at this location.',
      '/r/bicep/main.bicep(1,1) : Info some-rule: a note',
    ].join('\n');
    const diagnostics = parseDiagnostics(output);
    expect(diagnostics.map((d) => [d.level, d.code, d.line])).toEqual([
      ['Warning', 'no-unused-params', 12],
      ['Error', 'BCP018', 3],
      ['Info', 'some-rule', 1],
    ]);
    expect(problemsOf({ command: 'bicep lint', status: 0, diagnostics, other: '' })).toHaveLength(2);
    expect(problemsOf({ command: 'bicep lint', status: 1, diagnostics: [], other: 'boom' })).toEqual([
      'bicep lint exited 1: boom',
    ]);
    expect(problemsOf({ command: 'bicep lint', status: 0, diagnostics: [], other: '' })).toEqual([]);
  });
});

const found = findInstalledBicep();
const ci = process.env.CI === 'true';

if (found === null) {
  const notice =
    '\n*** BICEP NOT FOUND: the Bicep compiler checks are SKIPPED. Run scripts/fetch-bicep.sh (NuGet), ' +
    'install it with `az bicep install`, or set BICEP_PATH. Under CI=true this fails. ***\n\n';
  if (ci) {
    it('finds the Bicep CLI (CI=true requires it)', () => {
      throw new Error(notice.trim());
    });
  } else {
    process.stderr.write(notice);
    it.skip('the Bicep compiler checks (no Bicep CLI found)', () => undefined);
  }
} else {
  const cli = found.path;
  describe(`the real compiler (${found.via}: ${cli})`, () => {
    it.each([
      ['build', ['build', 'bicep/main.bicep', '--stdout']],
      ['build-params', ['build-params', 'bicep/main.bicepparam', '--stdout']],
      ['lint main.bicep', ['lint', 'bicep/main.bicep']],
      ['lint main.bicepparam', ['lint', 'bicep/main.bicepparam']],
    ])('%s: no error, no warning', (_name, args) => {
      expect(problemsOf(runBicep(cli, args))).toEqual([]);
    });

    it('fails on a warning: the same check on a file with an unused parameter finds it', () => {
      const dir = mkdtempSync(join(tmpdir(), 'bicep-check-'));
      try {
        writeFileSync(join(dir, 'bad.bicep'), "param unused string\noutput x string = 'y'\n");
        const problems = problemsOf(runBicep(cli, ['lint', join(dir, 'bad.bicep')], dir));
        expect(problems.join('\n')).toMatch(/Warning no-unused-params/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
