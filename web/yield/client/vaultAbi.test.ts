import { toFunctionSelector, type AbiFunction } from 'viem';
import * as TestStablecoin from '../../../contracts/artifacts/TestStablecoin';
import * as YieldVault from '../../../contracts/artifacts/YieldVault';
import { readPageScript } from '../../pageScript';
import { ERC20_ABI, VAULT_ABI } from './vaultAbi';

/** The site's ABI is written out for the bundle's sake; every entry must be the compiled contract's function. */
describe("the yield site's ABI matches the compiled contracts", () => {
  const functionsOf = (abi: readonly unknown[]) =>
    new Map(
      (abi as AbiFunction[])
        .filter((item) => item.type === 'function')
        .map((item) => [toFunctionSelector(item), item.outputs.map((output) => output.type)]),
    );

  const interfaces = [
    ['the vault (YieldVault.sol)', VAULT_ABI, YieldVault.abi],
    ['the asset (an ERC-20)', ERC20_ABI, TestStablecoin.abi],
  ] as const;

  it.each(interfaces)('%s: same selectors, same outputs', (_name, siteAbi, compiledAbi) => {
    const compiled = functionsOf(compiledAbi);
    for (const item of siteAbi) {
      const selector = toFunctionSelector(item);
      expect({ function: item.name, outputs: compiled.get(selector) }).toEqual({
        function: item.name,
        outputs: item.outputs.map((output) => output.type),
      });
    }
  });

  // The bundle carries selectors computed at build time (web/yield/client/functionSelectors.ts), not keccak.
  it.each(interfaces)(
    '%s: the bundled page calls each function by its compiled selector',
    (_name, siteAbi, compiledAbi) => {
      const script = readPageScript('yieldSite.js');
      const compiled = functionsOf(compiledAbi);
      for (const item of siteAbi) {
        const selector = toFunctionSelector(item);
        expect({ function: item.name, compiled: compiled.has(selector) }).toEqual({
          function: item.name,
          compiled: true,
        });
        expect(script).toContain(`${item.name}:"${selector}"`);
      }
    },
  );
});
