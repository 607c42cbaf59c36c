import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { AltoStartError, startAltoBundlers } from './alto';
import { type StartAnvilChainsReturnType, startAnvilChains } from './anvil';

/** Start-up failures of the bundler service (the happy path runs in every test run's global setup). */

let anvil: StartAnvilChainsReturnType;

beforeAll(async () => {
  anvil = await startAnvilChains({ chains: [{ chainId: 31_340 }], silent: true });
});

afterAll(async () => {
  await anvil?.stop();
});

it('a chain without the EntryPoint fails start-up with Alto’s own reason', async () => {
  const { chainId, rpcUrl } = anvil.chains[0]!;
  const started = startAltoBundlers({
    chains: [{ chainId, rpcUrl, entryPoints: [ENTRY_POINT_V07_ADDRESS] }],
    silent: true,
  });
  await expect(started).rejects.toThrow(AltoStartError);
  await expect(started).rejects.toThrow(
    /entry point 0x0000000071727De22E5E9d8BAf0edAc6f37da032 does not exist/i,
  );
});
