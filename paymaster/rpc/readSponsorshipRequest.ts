import { getAddress, isAddress, zeroAddress, type Address, type Hex } from 'viem';
import type { EntryPointVersion } from '../../chain/entryPoints';
import { EIP7702_INITCODE_MARKER } from '../../chain/paymasterData';
import type { SponsorshipMode } from '../../db/schema';
import {
  checkChainAllowed,
  checkGasMode,
  checkKeyNetworkClass,
  type PaymasterClient,
} from '../policy/clientChecks';
import { denial } from './denials';
import { supportedEntryPoint } from './entryPoints';
import { JSON_RPC_ERRORS } from './jsonRpc';
import { answerDenial, malformed, type DeniedAnswer } from './sponsorshipAnswer';
import {
  GAS_FIELDS_REQUIRED_FOR_SIGNING,
  PAYMASTER_METHODS,
  isPaymasterMethod,
  parseSponsorshipParams,
  type PaymasterMethod,
  type SponsorshipParams,
  type SponsorshipUserOperation,
} from './sponsorshipParams';
import type { UsageFacts } from './usageRecords';

/** `0x7702` or the 20-byte marker: the factory field of an EIP-7702 operation. */
const isEip7702Factory = (factory: Hex | undefined): boolean =>
  factory !== undefined && (factory === '0x7702' || factory.toLowerCase() === EIP7702_INITCODE_MARKER);

/** What a well-formed request asks for, once its shape passed every check that needs no database. */
export interface SponsorshipRequest {
  method: PaymasterMethod;
  /** False for stub data (pm_getPaymasterStubData): nothing is signed, limits are only read. */
  signs: boolean;
  parsed: { params: SponsorshipParams };
  userOp: SponsorshipUserOperation;
  chainId: number;
  mode: SponsorshipMode;
  entryPoint: { address: Address; version: EntryPointVersion };
  token: Address | undefined;
}

/**
 * The checks of a request's shape, in the order of SPEC's rules: method, params, chain and key class,
 * entry point, EIP-7702, gas fields for signing, the ERC-20 token, gas mode. Fills `facts` as it learns them.
 */
export function readSponsorshipRequest(
  client: PaymasterClient,
  request: { method: string; params: unknown[] },
  facts: UsageFacts,
): { ok: true; request: SponsorshipRequest } | DeniedAnswer {
  if (!isPaymasterMethod(request.method)) return unknownMethod(facts.method);
  const method: PaymasterMethod = request.method;
  const signs = method !== 'pm_getPaymasterStubData';

  const parsed = parseSponsorshipParams(request.params);
  if (!parsed.ok)
    return malformed(JSON_RPC_ERRORS.invalidParams, `Invalid params: ${parsed.detail}`, 'invalid_params');
  const { userOp, chainId, token: requestedToken } = parsed.params;
  const mode: SponsorshipMode = requestedToken === undefined ? 'sponsored' : 'user_paid';
  Object.assign(facts, {
    chainId,
    mode,
    sender: userOp.sender.toLowerCase(),
    entryPoint: parsed.params.entryPoint.toLowerCase(),
  });

  const chain = checkChainAllowed(client, chainId);
  if (!chain.ok) return answerDenial(chain.denial);
  const keyClass = checkKeyNetworkClass(client, chainId);
  if (!keyClass.ok) return answerDenial(keyClass.denial);

  const entryPoint = supportedEntryPoint(parsed.params.entryPoint);
  if (!entryPoint) {
    return answerDenial(
      denial(
        'paymaster_entrypoint_not_supported',
        `${parsed.params.entryPoint} is neither EntryPoint v0.8 nor v0.7`,
      ),
    );
  }
  const eip7702 = checkEip7702(userOp, entryPoint.version, signs);
  if (eip7702) return eip7702;
  const gasFields = signs ? checkGasFieldsForSigning(method, userOp) : undefined;
  if (gasFields) return gasFields;
  const token = requestedToken === undefined ? undefined : readToken(requestedToken, method);
  if (token && !token.ok) return token;

  const gasMode = checkGasMode(client, mode);
  if (!gasMode.ok) return answerDenial(gasMode.denial);
  return {
    ok: true,
    request: { method, signs, parsed, userOp, chainId, mode, entryPoint, token: token?.address },
  };
}

const unknownMethod = (method: string | null): DeniedAnswer =>
  malformed(
    JSON_RPC_ERRORS.methodNotFound,
    `Unknown method: ${method}; supported: ${PAYMASTER_METHODS.join(', ')}`,
    'unknown_method',
  );

/** EIP-7702 operations exist on EntryPoint v0.8 only, and their signed hash covers the delegate. */
function checkEip7702(
  userOp: SponsorshipUserOperation,
  entryPointVersion: EntryPointVersion,
  signs: boolean,
): DeniedAnswer | undefined {
  if (!isEip7702Factory(userOp.factory)) return undefined;
  if (entryPointVersion !== '0.8') {
    return malformed(
      JSON_RPC_ERRORS.invalidParams,
      'Invalid params: EIP-7702 operations (factory 0x7702) need EntryPoint v0.8',
      'eip7702_needs_entrypoint_v08',
    );
  }
  if (signs && !userOp.eip7702Delegate) {
    return malformed(
      JSON_RPC_ERRORS.invalidParams,
      'Invalid params: userOp.eip7702Auth.address (the delegate) is required when factory is the EIP-7702 marker',
      'eip7702_delegate_missing',
    );
  }
  return undefined;
}

/** Signed data needs the gas fields the signer signs and the limits price. */
function checkGasFieldsForSigning(
  method: PaymasterMethod,
  userOp: SponsorshipUserOperation,
): DeniedAnswer | undefined {
  const missing = GAS_FIELDS_REQUIRED_FOR_SIGNING.filter((field) => userOp.gas[field] === undefined);
  if (missing.length === 0) return undefined;
  return malformed(
    JSON_RPC_ERRORS.invalidParams,
    `paymaster_gas_fields_missing: ${method} needs ${GAS_FIELDS_REQUIRED_FOR_SIGNING.join(', ')}; missing ${missing.join(', ')}`,
    'paymaster_gas_fields_missing',
  );
}

/** `context.token`: a valid non-zero address, and not with the method that only sponsors. */
function readToken(
  requestedToken: unknown,
  method: PaymasterMethod,
): { ok: true; address: Address } | DeniedAnswer {
  if (
    typeof requestedToken !== 'string' ||
    !isAddress(requestedToken, { strict: false }) ||
    requestedToken.toLowerCase() === zeroAddress
  ) {
    return malformed(
      JSON_RPC_ERRORS.invalidParams,
      'paymaster_token_invalid: context.token must be a non-zero 0x address',
      'paymaster_token_invalid',
    );
  }
  if (method === 'pm_sponsorUserOperation') {
    return malformed(
      JSON_RPC_ERRORS.invalidParams,
      'paymaster_token_unsupported_method: pm_sponsorUserOperation sponsors gas and takes no context.token; use pm_getPaymasterData for user-paid gas',
      'paymaster_token_unsupported_method',
    );
  }
  return { ok: true, address: getAddress(requestedToken) };
}
