import { type Hex, type PublicClient, numberToHex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import type { ChainContracts } from '../chain/deployments';
import type { EntryPointVersion } from '../chain/entryPoints';
import {
  type SponsoredUserOperation,
  type SponsorshipTerms,
  MINIMUM_PAYMASTER_GAS,
  EIP7702_INITCODE_MARKER,
  encodePaymasterData,
  sponsorshipHash,
} from '../chain/paymasterData';
import { PAYMASTER_RELEASES, paymasterFromContracts } from '../chain/paymasters';
import { type ChainFeeLevels, feeViolation, gasLimitViolation, totalGas } from '../chain/operationBounds';
import {
  depositTooLow,
  invalidParams,
  operationOutOfBounds,
  SIGNER_RPC_ERROR_CODES,
  SignerRpcError,
  tokenNotWhitelisted,
  unsupportedChain,
  unsupportedEntryPoint,
} from './signerRpcError';
import {
  signPaymasterDataParamsSchema,
  type SignPaymasterDataRequest,
  type SignPaymasterDataResult,
} from './protocol';
import { type PaymasterDeposits, readDeposit } from './deposits';

/**
 * `signer_signPaymasterData`: checks that this signer can serve the operation (chain, entry point,
 * token, deposit) and returns paymaster fields signed over the hash the contract verifies. Policy
 * (who may be sponsored, for what) is the API's job; this service only refuses what it cannot sign.
 */

export interface PaymasterDataSignerDependencies {
  /** The verifying signer of every deployed paymaster. */
  account: LocalAccount;
  /** Per-chain contract addresses (DEPLOYMENTS_FILE): where the paymasters are. */
  deployments: ChainContracts[];
  /** RPC per chain; a chain without one is not supported. */
  publicClientFor(chainId: number): PublicClient | undefined;
  /**
   * chainId → token (any case) → exchange rate (token base units per 1e18 wei): the whitelist, the rate
   * signed when the request names none, and the centre of the band a requested rate must lie in.
   */
  tokenRates: Record<string, Record<string, string>> | undefined;
  now(): Date;
  /** Told (without secrets) why a deposit could not be read. */
  onDepositReadFailure?(chainId: number, error: unknown): void;
  /** The chains' current fees, which an operation's fees are bounded by. */
  feeLevels: ChainFeeLevels;
  /** This signer's own bounds, whatever the API decided (SIGNER_MAX_* / SIGNER_FEE_BOUND_BPS). */
  bounds: SignerBounds;
  /** The deposits, read once per block (signer/deposits.ts); without it every signature reads its own. */
  deposits?: PaymasterDeposits;
}

export interface SignerBounds {
  /** The latest validUntil signed, in seconds from the signer's clock. */
  maxValiditySec: number;
  /** maxFeePerGas / maxPriorityFeePerGas against the chain's current fees, in basis points. */
  feeBoundBps: number;
  maxOperationGas: number;
  /** The share of the EntryPoint deposit one operation's maximum cost may take, in basis points. */
  maxDepositShareBps: number;
  /** A requested exchange rate lies within [configured × 10000 / band, configured × band / 10000] (SIGNER_ERC20_RATE_BAND_BPS). */
  rateBandBps: number;
}

export type SignPaymasterData = (params: unknown) => Promise<SignPaymasterDataResult>;

/** Builds the method handler over its dependencies. */
export function createPaymasterDataSigner(deps: PaymasterDataSignerDependencies): SignPaymasterData {
  const rates = normalizeTokenRates(deps.tokenRates);

  return async (params) => {
    const request = parseRequest(params);
    const version: EntryPointVersion = request.entryPointVersion;
    const deployment = deps.deployments.find((chain) => chain.chainId === request.chainId);
    const paymaster = paymasterFromContracts(deployment?.contracts, version);
    const publicClient = deps.publicClientFor(request.chainId);
    if (!paymaster || !publicClient) throw unsupportedChain();
    if (request.entryPoint !== PAYMASTER_RELEASES[version].entryPoint) throw unsupportedEntryPoint();
    const nowSec = Math.floor(deps.now().getTime() / 1000);
    if (request.validUntil <= nowSec) throw invalidParams('validUntil is in the past');
    if (request.validUntil > nowSec + deps.bounds.maxValiditySec)
      throw invalidParams(`validUntil is more than ${deps.bounds.maxValiditySec} s ahead`);

    // An EIP-7702 operation is signed over its delegate (the v0.8 paymaster hashes the sender's real one).
    const eip7702 = request.userOp.factory === EIP7702_INITCODE_MARKER;
    if (eip7702 && version !== '0.8')
      throw invalidParams('EIP-7702 operations (factory 0x7702) need EntryPoint v0.8');
    const eip7702Delegate = eip7702 ? request.userOp.eip7702Auth?.address : undefined;
    if (eip7702 && !eip7702Delegate)
      throw invalidParams(
        'userOp.eip7702Auth.address (the delegate) is required when factory is the EIP-7702 marker',
      );

    let terms: SponsorshipTerms;
    if (request.mode === 'erc20') {
      const configuredRate = rates.get(request.chainId)?.get(request.token!.toLowerCase());
      if (configuredRate === undefined) throw tokenNotWhitelisted();
      const exchangeRate = request.exchangeRate ?? configuredRate;
      // A compromised or mistaken caller cannot have gas sold for nothing (or users charged a fortune).
      if (!withinBand(exchangeRate, configuredRate, deps.bounds.rateBandBps))
        throw operationOutOfBounds(
          `exchangeRate ${exchangeRate} is outside the band of ${deps.bounds.rateBandBps} bps around the token's configured rate`,
        );
      terms = {
        mode: 'erc20',
        validUntil: request.validUntil,
        validAfter: request.validAfter,
        token: request.token!,
        exchangeRate,
      };
    } else {
      terms = { mode: 'sponsored', validUntil: request.validUntil, validAfter: request.validAfter };
    }

    const minimum = MINIMUM_PAYMASTER_GAS[request.mode];
    const { userOp } = request;
    const paymasterVerificationGasLimit = max(
      userOp.paymasterVerificationGasLimit ?? 0n,
      minimum.verification,
    );
    const paymasterPostOpGasLimit = max(userOp.paymasterPostOpGasLimit ?? 0n, minimum.postOp);
    const userOperation: SponsoredUserOperation = {
      sender: userOp.sender,
      nonce: userOp.nonce,
      factory: userOp.factory ?? undefined,
      factoryData: userOp.factoryData ? (userOp.factoryData as Hex) : undefined,
      callData: userOp.callData as Hex,
      callGasLimit: userOp.callGasLimit,
      verificationGasLimit: userOp.verificationGasLimit,
      preVerificationGas: userOp.preVerificationGas,
      maxFeePerGas: userOp.maxFeePerGas,
      maxPriorityFeePerGas: userOp.maxPriorityFeePerGas,
      paymasterVerificationGasLimit,
      paymasterPostOpGasLimit,
    };

    const signedGas = { ...userOp, paymasterVerificationGasLimit, paymasterPostOpGasLimit };
    const outOfGas = gasLimitViolation(signedGas, deps.bounds.maxOperationGas);
    if (outOfGas) throw operationOutOfBounds(outOfGas);
    const maxCost = totalGas(signedGas) * userOp.maxFeePerGas;
    const entryPoint = PAYMASTER_RELEASES[version].entryPoint;
    const depositOf = (fresh: boolean) =>
      deposit(
        () =>
          deps.deposits
            ? deps.deposits.current(request.chainId, entryPoint, paymaster, { fresh })
            : readDeposit(publicClient, entryPoint, paymaster),
        (error) => deps.onDepositReadFailure?.(request.chainId, error),
      );
    const [level, knownDeposit] = await Promise.all([
      deps.feeLevels.current(request.chainId),
      depositOf(false),
    ]);
    if (!level)
      throw new SignerRpcError(
        SIGNER_RPC_ERROR_CODES.internalError,
        'Internal error: chain fees unavailable',
      );
    const outOfFees = feeViolation(userOp, level, deps.bounds.feeBoundBps);
    if (outOfFees) throw operationOutOfBounds(outOfFees);
    // One operation may take only a share of the deposit, so no single signature can drain it. A
    // refusal is decided on a deposit read now, not on the block's cached figure (a top-up counts at once).
    const tooLow = (amount: bigint) => maxCost * 10_000n > amount * BigInt(deps.bounds.maxDepositShareBps);
    if (tooLow(knownDeposit) && (!deps.deposits || tooLow(await depositOf(true)))) throw depositTooLow();

    const hash = sponsorshipHash({
      userOperation,
      chainId: request.chainId,
      paymaster,
      terms,
      ...(eip7702Delegate && { eip7702Delegate }),
    });
    const signature = await deps.account.signMessage({ message: { raw: hash } });
    return {
      paymaster,
      paymasterData: encodePaymasterData(terms, signature),
      paymasterVerificationGasLimit: numberToHex(paymasterVerificationGasLimit),
      paymasterPostOpGasLimit: numberToHex(paymasterPostOpGasLimit),
      mode: request.mode,
    };
  };
}

function parseRequest(params: unknown): SignPaymasterDataRequest {
  const parsed = signPaymasterDataParamsSchema.safeParse(params);
  if (!parsed.success) {
    throw invalidParams(
      parsed.error.issues
        .map((issue) => `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`)
        .join('; '),
    );
  }
  return parsed.data[0];
}

/** The deposit, or the signer's -32603 when it cannot be read (the RPC URL may carry a provider key: no detail). */
async function deposit(read: () => Promise<bigint>, onFailure: (error: unknown) => void): Promise<bigint> {
  try {
    return await read();
  } catch (error) {
    onFailure(error);
    throw new SignerRpcError(
      SIGNER_RPC_ERROR_CODES.internalError,
      'Internal error: paymaster deposit unavailable',
    );
  }
}

function normalizeTokenRates(
  configured: Record<string, Record<string, string>> | undefined,
): Map<number, Map<string, bigint>> {
  const byChain = new Map<number, Map<string, bigint>>();
  for (const [chainId, tokens] of Object.entries(configured ?? {})) {
    byChain.set(
      Number(chainId),
      new Map(Object.entries(tokens).map(([token, rate]) => [token.toLowerCase(), BigInt(rate)])),
    );
  }
  return byChain;
}

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/** configured ÷ band ≤ rate ≤ configured × band (band in basis points, ≥ 10000). */
function withinBand(rate: bigint, configured: bigint, bandBps: number): boolean {
  const band = BigInt(bandBps);
  return rate * band >= configured * 10_000n && rate * 10_000n <= configured * band;
}
