import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../config';

const root = join(__dirname, '..');
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { command?: string[]; environment?: Record<string, string> }>;
};
const appServices = ['api', 'worker', 'signer'];

describe('docker-compose.yml', () => {
  it('defines postgres, temporal, its UI and the application processes', () => {
    expect(Object.keys(compose.services)).toEqual(
      expect.arrayContaining(['postgres', 'temporal', 'temporal-ui', ...appServices]),
    );
  });

  it.each(appServices)('%s sets only variables the config module knows, and they validate', (service) => {
    const environment = compose.services[service]!.environment ?? {};
    expect(Object.keys(environment).length).toBeGreaterThan(0);
    for (const variable of Object.keys(environment)) expect(CONFIG_VARIABLES).toContain(variable);
    // ${VAR:-default} interpolation resolves to the default when the host does not set VAR.
    const resolved = Object.fromEntries(
      Object.entries(environment).map(([name, value]) => [
        name,
        String(value).replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1'),
      ]),
    );
    expect(() => loadConfig(resolved)).not.toThrow();
  });

  it.each(appServices)('%s runs compiled JavaScript whose source module exists', (service) => {
    const command = compose.services[service]!.command ?? [];
    expect(command[0]).toBe('node');
    const entry = command.find((part) => /^dist\/.+\.js$/.test(part));
    expect(entry).toBeDefined();
    // dist/ mirrors the source tree (dev/buildProduction.ts): dist/api/main.js comes from api/main.ts.
    const source = entry!.replace(/^dist\//, '').replace(/\.js$/, '.ts');
    expect(() => readFileSync(join(root, source))).not.toThrow();
  });
});
