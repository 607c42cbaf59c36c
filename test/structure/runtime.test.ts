import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The project runs on the Node.js release pinned in package.json (`devDependencies.node`, which npm
 * links into node_modules/.bin for every script), whatever node the machine has: `npm test` must
 * reach jest on it. The version is printed so a CI log shows which node ran the suite.
 */
describe('the runtime', () => {
  const packageJson = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    engines: { node: string };
    devDependencies: Record<string, string>;
  };

  it('is the pinned Node.js LTS release, 24', () => {
    process.stdout.write(`tests run on Node.js ${process.version}\n`);
    expect(process.version).toBe(`v${packageJson.devDependencies.node}`);
    expect(Number(process.versions.node.split('.')[0])).toBe(24);
  });

  it('is what package.json asks of every install', () => {
    expect(packageJson.engines.node).toBe('>=24');
  });
});
