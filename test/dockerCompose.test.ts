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

  it.each(appServices)('%s runs an entrypoint that exists', (service) => {
    const command = compose.services[service]!.command ?? [];
    const entry = command.find((part) => part.endsWith('.ts'));
    expect(entry).toBeDefined();
    expect(() => readFileSync(join(root, entry!))).not.toThrow();
  });
});
