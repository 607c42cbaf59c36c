/** Bundler methods that carry a user operation as params[0]. */
export const USER_OPERATION_METHODS: ReadonlySet<string> = new Set([
  'eth_sendUserOperation',
  'eth_estimateUserOperationGas',
]);

/**
 * What the bundler proxy relays (docs/paymaster.md "The bundler proxy (`POST /v1/paymaster/bundler/{chainId}`)"): the ERC-4337 bundler methods and the gas-price method
 * wallet SDKs call on the bundler URL. Anything else (debug_*, provider admin or paid methods) would
 * spend our provider credential for the caller: it is answered -32601 and never reaches the provider.
 */
export const RELAYED_BUNDLER_METHODS: ReadonlySet<string> = new Set([
  ...USER_OPERATION_METHODS,
  'eth_getUserOperationByHash',
  'eth_getUserOperationReceipt',
  'eth_supportedEntryPoints',
  'eth_chainId',
  'pimlico_getUserOperationGasPrice',
]);
