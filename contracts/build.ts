import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';

/**
 * Compiles every `contracts/**\/*.sol` with solc-js (standard JSON) into typed TS modules under
 * `contracts/artifacts/`: one module per contract (`contractName`, `sourceName`, `abi` as const,
 * `bytecode`, `deployedBytecode`) and an `index.ts` re-exporting each as a namespace.
 *
 * Reproducible: sources are sorted and named relative to the repository root, compiler settings are
 * fixed and `bytecodeHash: 'none'` keeps comments and paths out of the bytecode, so a contract
 * deployed through the deterministic deployer lands at the same address from every checkout.
 * Cached: a hash of sources, settings, compiler and dependency versions and this script is stored in
 * `contracts/artifacts/build-info.json`; a matching hash skips the compiler entirely.
 */

/** The npm package that ships the compiler (solc-js); its version is part of the build hash. */
const SOLC_PACKAGE = 'solc';
/** Packages whose Solidity sources imports may reach, resolved from node_modules. */
const IMPORTABLE_PACKAGES = [
  '@openzeppelin/contracts',
  '@account-abstraction/contracts',
  '@account-abstraction/contracts-v07',
  '@layerzerolabs/lz-evm-protocol-v2',
  '@layerzerolabs/lz-evm-messagelib-v2',
  '@layerzerolabs/oapp-evm',
  '@layerzerolabs/oft-evm',
  'solidity-bytes-utils',
];

export const COMPILER_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  metadata: { bytecodeHash: 'none' },
} as const;

export interface BuildContractsParameters {
  /** Repository root; sources are named relative to it. Defaults to the parent of this file's folder. */
  rootDir?: string;
  /** Folder holding the `.sol` sources (searched recursively). Defaults to `<rootDir>/contracts`. */
  sourcesDir?: string;
  /** Output folder, skipped while searching sources. Defaults to `<rootDir>/contracts/artifacts`. */
  outDir?: string;
  /** Where the compiler and the imported Solidity packages are installed. Defaults to `<rootDir>/node_modules`. */
  nodeModulesDir?: string;
  /** Compile even when the stored hash matches. */
  force?: boolean;
}

export interface BuildContractsReturnType {
  /** True when the stored hash matched and nothing was compiled. */
  cached: boolean;
  /** Names of the contracts that have an artifact module, sorted. */
  contracts: string[];
  /** Compiler warnings, formatted by solc (empty when cached). */
  warnings: string[];
  outDir: string;
  hash: string;
}

/** solc reported errors; `errors` holds solc's own formatted messages. */
export class ContractCompilationError extends Error {
  override name = 'ContractCompilationError';
  constructor(readonly errors: string[]) {
    super(`Solidity compilation failed with ${errors.length} error(s):\n\n${errors.join('\n')}`);
  }
}

/** The build could not be set up or its output could not be turned into modules. */
export class ContractBuildError extends Error {
  override name = 'ContractBuildError';
}

interface BuildInfo {
  hash: string;
  solcVersion: string;
  files: string[];
}

interface SolcOutputContract {
  abi: unknown[];
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string; message: string }[];
  contracts?: Record<string, Record<string, SolcOutputContract>>;
}

const BUILD_INFO_FILE = 'build-info.json';

/** Builds the contract artifacts (or keeps them when nothing changed) and says what it did. */
export async function buildContracts({
  rootDir = resolve(__dirname, '..'),
  sourcesDir = join(rootDir, 'contracts'),
  outDir = join(rootDir, 'contracts', 'artifacts'),
  nodeModulesDir = join(rootDir, 'node_modules'),
  force = false,
}: BuildContractsParameters = {}): Promise<BuildContractsReturnType> {
  const sources = readSources(rootDir, sourcesDir, outDir);
  if (Object.keys(sources).length === 0) throw new ContractBuildError(`no .sol files under ${sourcesDir}`);

  const solcVersion = packageVersion(nodeModulesDir, SOLC_PACKAGE);
  const hash = buildHash(nodeModulesDir, sources, solcVersion);
  const previous = readBuildInfo(outDir);
  if (!force && previous?.hash === hash && previous.files.every((file) => existsSync(join(outDir, file)))) {
    return { cached: true, contracts: contractNamesOf(previous.files), warnings: [], outDir, hash };
  }

  const { default: solc } = await import('solc');
  const loadedVersion = String(solc.version());
  if (!loadedVersion.startsWith(`${solcVersion}+`)) {
    throw new ContractBuildError(`solc package ${solcVersion} loaded compiler ${loadedVersion}`);
  }

  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([name, content]) => [name, { content }])),
    settings: {
      ...COMPILER_SETTINGS,
      // Code generation only for our own sources; imported libraries are compiled only as far as they are used.
      outputSelection: Object.fromEntries(
        Object.keys(sources).map((name) => [
          name,
          { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] },
        ]),
      ),
    },
  };
  const output = JSON.parse(
    solc.compile(JSON.stringify(input), { import: (path: string) => readImport(nodeModulesDir, path) }),
  ) as SolcOutput;

  const problems = output.errors ?? [];
  const errors = problems.filter((problem) => problem.severity === 'error').map((p) => p.formattedMessage);
  if (errors.length > 0) throw new ContractCompilationError(errors);
  const warnings = problems
    .filter((problem) => problem.severity === 'warning')
    .map((p) => p.formattedMessage);

  const modules = renderModules(output, Object.keys(sources));
  writeArtifacts(outDir, modules, { hash, solcVersion: loadedVersion, files: [...modules.keys()].sort() });
  return { cached: false, contracts: contractNamesOf([...modules.keys()]), warnings, outDir, hash };
}

/** Sorted map of source unit name (posix path relative to rootDir) → content. */
function readSources(rootDir: string, sourcesDir: string, outDir: string): Record<string, string> {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (resolve(path) !== resolve(outDir) && entry.name !== 'node_modules') walk(path);
      } else if (entry.isFile() && entry.name.endsWith('.sol')) {
        files.push(path);
      }
    }
  };
  walk(sourcesDir);
  const named = files.map((file) => [relative(rootDir, file).split(sep).join(posix.sep), file] as const);
  named.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(named.map(([name, file]) => [name, readFileSync(file, 'utf8')]));
}

/** Import callback: serves `@openzeppelin/...` and `@account-abstraction/...` from node_modules. */
function readImport(nodeModulesDir: string, path: string): { contents: string } | { error: string } {
  const allowed = IMPORTABLE_PACKAGES.some((pkg) => path.startsWith(`${pkg}/`));
  if (!allowed) {
    return {
      error: `import "${path}" is outside contracts/ and not one of ${IMPORTABLE_PACKAGES.join(', ')}`,
    };
  }
  const file = resolve(nodeModulesDir, path);
  if (!file.startsWith(resolve(nodeModulesDir) + sep) || !existsSync(file)) {
    return { error: `import "${path}" not found in ${nodeModulesDir}` };
  }
  return { contents: readFileSync(file, 'utf8') };
}

function buildHash(nodeModulesDir: string, sources: Record<string, string>, solcVersion: string): string {
  const hash = createHash('sha256');
  const feed = (label: string, value: string): void => {
    hash.update(`${label}\0${value.length}\0${value}\0`);
  };
  feed('solc', solcVersion);
  feed('settings', JSON.stringify(COMPILER_SETTINGS));
  feed('builder', readFileSync(__filename, 'utf8'));
  for (const pkg of IMPORTABLE_PACKAGES) {
    feed(pkg, existsSync(join(nodeModulesDir, pkg)) ? packageVersion(nodeModulesDir, pkg) : 'absent');
  }
  for (const [name, content] of Object.entries(sources)) feed(name, content);
  return hash.digest('hex');
}

function packageVersion(nodeModulesDir: string, pkg: string): string {
  const file = join(nodeModulesDir, pkg, 'package.json');
  if (!existsSync(file)) throw new ContractBuildError(`package ${pkg} is not installed (npm ci)`);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

function readBuildInfo(outDir: string): BuildInfo | undefined {
  try {
    return JSON.parse(readFileSync(join(outDir, BUILD_INFO_FILE), 'utf8')) as BuildInfo;
  } catch {
    return undefined;
  }
}

function contractNamesOf(files: string[]): string[] {
  return files
    .filter((file) => file !== 'index.ts')
    .map((file) => file.replace(/\.ts$/, ''))
    .sort();
}

/** File name → module text, including index.ts. */
function renderModules(output: SolcOutput, sourceNames: string[]): Map<string, string> {
  const modules = new Map<string, string>();
  const origin = new Map<string, string>();
  for (const sourceName of sourceNames) {
    const contracts = output.contracts?.[sourceName] ?? {};
    for (const contractName of Object.keys(contracts).sort()) {
      const contract = contracts[contractName]!;
      const seen = origin.get(contractName);
      if (seen !== undefined) {
        throw new ContractBuildError(
          `contract name ${contractName} is declared in both ${seen} and ${sourceName}; artifact modules are named by contract`,
        );
      }
      origin.set(contractName, sourceName);
      const bytecode = `0x${contract.evm.bytecode.object}`;
      const deployedBytecode = `0x${contract.evm.deployedBytecode.object}`;
      if (bytecode.includes('__$')) {
        throw new ContractBuildError(
          `${sourceName}:${contractName} needs library linking, which the build does not support; make the library functions internal`,
        );
      }
      modules.set(
        `${contractName}.ts`,
        [
          `// Generated by contracts/build.ts from ${sourceName}. Do not edit.`,
          `export const contractName = ${JSON.stringify(contractName)} as const;`,
          `export const sourceName = ${JSON.stringify(sourceName)} as const;`,
          `export const abi = ${JSON.stringify(contract.abi, null, 2)} as const;`,
          `export const bytecode = ${JSON.stringify(bytecode)} as const;`,
          `export const deployedBytecode = ${JSON.stringify(deployedBytecode)} as const;`,
          '',
        ].join('\n'),
      );
    }
  }
  const names = [...origin.keys()].sort();
  modules.set(
    'index.ts',
    [
      '// Generated by contracts/build.ts. Do not edit.',
      ...names.map((name) => `export * as ${name} from './${name}';`),
      '',
    ].join('\n'),
  );
  return modules;
}

/** Writes each module atomically, removes modules of contracts that no longer exist, then the build info. */
function writeArtifacts(outDir: string, modules: Map<string, string>, info: BuildInfo): void {
  mkdirSync(outDir, { recursive: true });
  const previous = readBuildInfo(outDir);
  for (const stale of previous?.files ?? []) {
    if (!modules.has(stale)) rmSync(join(outDir, stale), { force: true });
  }
  rmSync(join(outDir, BUILD_INFO_FILE), { force: true });
  for (const [file, text] of modules) writeAtomically(join(outDir, file), text);
  writeAtomically(join(outDir, BUILD_INFO_FILE), `${JSON.stringify(info, null, 2)}\n`);
}

function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

if (require.main === module) {
  const started = performance.now();
  buildContracts({ force: process.argv.includes('--force') }).then(
    (result) => {
      for (const warning of result.warnings) process.stderr.write(`${warning}\n`);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const what = result.cached ? 'up to date' : 'compiled';
      console.log(
        `contracts ${what} (${result.contracts.join(', ')}) in ${seconds}s → ${relative(process.cwd(), result.outDir)}`,
      );
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    },
  );
}
