import { getAddress, isAddress, zeroAddress, type Address, type Hex } from 'viem';
import type { EntryPointVersion } from '../chain/entryPoints';
import { EIP7702_INITCODE_MARKER } from '../chain/paymasterData';
import type { SponsorshipMode } from '../db/schema';
import { checkChainAllowed, checkGasMode, checkKeyNetworkClass, type PaymasterClient } from './clientChecks';
import { denial } from './denials';
import { supportedEntryPoint } from './entryPoints';
import { JSON_RPC_ERRORS } from './jsonRpc';
import { malformed, rejectFromDenial, type Decision } from './rpcDecision';
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

const refused = (decision: Decision) => ({ ok: false as const, decision });

/**
 * The checks of a request's shape, in the order of SPEC's rules: method, params, chain and key class,
 * entry point, EIP-7702, gas fields for signing, the ERC-20 token, gas mode. Fills `facts` as it learns them.
 */
export function readSponsorshipRequest(
  client: PaymasterClient,
  request: { method: string; params: unknown[] },
  facts: UsageFacts,
): { ok: true; request: SponsorshipRequest } | { ok: false; decision: Decision } {
  // Method.
  if (!isPaymasterMethod(request.method)) {
    return refused(
      malformed(
        JSON_RPC_ERRORS.methodNotFound,
        `Unknown method: ${facts.method}; supported: ${PAYMASTER_METHODS.join(', ')}`,
        'unknown_method',
      ),
    );
  }
  const method: PaymasterMethod = request.method;
  const signs = method !== 'pm_getPaymasterStubData';

  // Params.
  const parsed = parseSponsorshipParams(request.params);
  if (!parsed.ok)
    return refused(
      malformed(JSON_RPC_ERRORS.invalidParams, `Invalid params: ${parsed.detail}`, 'invalid_params'),
    );
  const { userOp, chainId, token: requestedToken } = parsed.params;
  const mode: SponsorshipMode = requestedToken === undefined ? 'sponsored' : 'user_paid';
  Object.assign(facts, {
    chainId,
    mode,
    sender: userOp.sender.toLowerCase(),
    entryPoint: parsed.params.entryPoint.toLowerCase(),
  });

  // Chain and key class.
  const chain = checkChainAllowed(client, chainId);
  if (!chain.ok) return refused(rejectFromDenial(chain.denial));
  const keyClass = checkKeyNetworkClass(client, chainId);
  if (!keyClass.ok) return refused(rejectFromDenial(keyClass.denial));

  // Entry point.
  const entryPoint = supportedEntryPoint(parsed.params.entryPoint);
  if (!entryPoint) {
    return refused(
      rejectFromDenial(
        denial(
          'paymaster_entrypoint_not_supported',
          `${parsed.params.entryPoint} is neither EntryPoint v0.8 nor v0.7`,
        ),
      ),
    );
  }

  // EIP-7702 operations exist on EntryPoint v0.8 only, and their signed hash covers the delegate.
  if (isEip7702Factory(userOp.factory)) {
    if (entryPoint.version !== '0.8') {
      return refused(
        malformed(
          JSON_RPC_ERRORS.invalidParams,
          'Invalid params: EIP-7702 operations (factory 0x7702) need EntryPoint v0.8',
          'eip7702_needs_entrypoint_v08',
        ),
      );
    }
    if (signs && !userOp.eip7702Delegate) {
      return refused(
        malformed(
          JSON_RPC_ERRORS.invalidParams,
          'Invalid params: userOp.eip7702Auth.address (the delegate) is required when factory is the EIP-7702 marker',
          'eip7702_delegate_missing',
        ),
      );
    }
  }

  // Gas fields.
  if (signs) {
    const missing = GAS_FIELDS_REQUIRED_FOR_SIGNING.filter((field) => userOp.gas[field] === undefined);
    if (missing.length > 0) {
      return refused(
        malformed(
          JSON_RPC_ERRORS.invalidParams,
          `paymaster_gas_fields_missing: ${method} needs ${GAS_FIELDS_REQUIRED_FOR_SIGNING.join(', ')}; missing ${missing.join(', ')}`,
          'paymaster_gas_fields_missing',
        ),
      );
    }
  }

  // Token: a valid address, and not with the method that only sponsors.
  let token: Address | undefined;
  if (requestedToken !== undefined) {
    if (
      typeof requestedToken !== 'string' ||
      !isAddress(requestedToken, { strict: false }) ||
      requestedToken.toLowerCase() === zeroAddress
    ) {
      return refused(
        malformed(
          JSON_RPC_ERRORS.invalidParams,
          'paymaster_token_invalid: context.token must be a non-zero 0x address',
          'paymaster_token_invalid',
        ),
      );
    }
    if (method === 'pm_sponsorUserOperation') {
      return refused(
        malformed(
          JSON_RPC_ERRORS.invalidParams,
          'paymaster_token_unsupported_method: pm_sponsorUserOperation sponsors gas and takes no context.token; use pm_getPaymasterData for user-paid gas',
          'paymaster_token_unsupported_method',
        ),
      );
    }
    token = getAddress(requestedToken);
  }

  // Gas mode.
  const gasMode = checkGasMode(client, mode);
  if (!gasMode.ok) return refused(rejectFromDenial(gasMode.denial));
  return { ok: true, request: { method, signs, parsed, userOp, chainId, mode, entryPoint, token } };
}
