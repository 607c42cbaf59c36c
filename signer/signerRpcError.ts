/**
 * A JSON-RPC error the signing service answers with (HTTP 200, `{ jsonrpc, id, error: { code, message } }`).
 * The API relays -32602 and -32000 errors to paymaster callers unchanged (SPEC, sponsorship rule 10).
 */
export class SignerRpcError extends Error {
  override name = 'SignerRpcError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const SIGNER_RPC_ERROR_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** The request is well-formed but the paymaster cannot serve it now (deposit too low). */
  serverError: -32000,
} as const;

export const unsupportedChain = () =>
  new SignerRpcError(SIGNER_RPC_ERROR_CODES.invalidParams, 'unsupported chain');
export const unsupportedEntryPoint = () =>
  new SignerRpcError(SIGNER_RPC_ERROR_CODES.invalidParams, 'unsupported entry point');
export const tokenNotWhitelisted = () =>
  new SignerRpcError(SIGNER_RPC_ERROR_CODES.invalidParams, 'token not whitelisted');
export const depositTooLow = () =>
  new SignerRpcError(SIGNER_RPC_ERROR_CODES.serverError, 'paymaster deposit too low');
export const invalidParams = (detail: string) =>
  new SignerRpcError(SIGNER_RPC_ERROR_CODES.invalidParams, `Invalid params: ${detail}`);
/** The operation's gas or fees are beyond what this signer signs for (its own bounds, whatever the API decided). */
export const operationOutOfBounds = (detail: string) =>
  new SignerRpcError(SIGNER_RPC_ERROR_CODES.invalidParams, `operation out of bounds: ${detail}`);
