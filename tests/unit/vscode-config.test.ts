/**
 * `.vscode/` for F5 with Core Tools: the debugger attaches to the Node worker once `func: host start`
 * runs on a fresh build, and the extension deploys what azd deploys. The pieces name each other by
 * label, script and folder; this keeps the names in step.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

const ROOT = resolve(__dirname, '..', '..');
const json = <T>(path: string): T => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as T;

interface Task {
  type: string;
  label: string;
  command?: string;
  script?: string;
  dependsOn?: string;
  isBackground?: boolean;
}

const launch = json<{ configurations: Array<Record<string, unknown>> }>('.vscode/launch.json');
const tasks = json<{ tasks: Task[] }>('.vscode/tasks.json').tasks;
const settings = json<Record<string, unknown>>('.vscode/settings.json');
const scripts = json<{ scripts: Record<string, string> }>('package.json').scripts;
const task = (label: unknown): Task | undefined => tasks.find((candidate) => candidate.label === label);

describe('.vscode', () => {
  it('attaches to the Node worker on 9229 after the host starts on a fresh build', () => {
    const attach = launch.configurations.find((config) => config.name === 'Attach to Node Functions');
    expect(attach).toMatchObject({ type: 'node', request: 'attach', port: 9229 });
    const host = task(attach?.preLaunchTask);
    expect(host).toMatchObject({ type: 'func', command: 'host start', isBackground: true });
    const build = task(host?.dependsOn);
    expect(build).toMatchObject({ type: 'npm', script: 'build' });
    expect(scripts.build).toBeDefined();
  });

  it('deploys from the folder azd deploys, packaged first', () => {
    const azure = parse(readFileSync(join(ROOT, 'azure.yaml'), 'utf8')) as {
      services: { api: { dist: string } };
    };
    expect(settings['azureFunctions.deploySubpath']).toBe(azure.services.api.dist);
    expect(task(settings['azureFunctions.preDeployTask'])).toMatchObject({ type: 'npm', script: 'package' });
    expect(scripts.package).toBeDefined();
    expect(settings).toMatchObject({
      'azureFunctions.projectLanguage': 'TypeScript',
      'azureFunctions.projectRuntime': '~4',
    });
    expect(json<{ recommendations: string[] }>('.vscode/extensions.json').recommendations).toContain(
      'ms-azuretools.vscode-azurefunctions',
    );
  });
});
