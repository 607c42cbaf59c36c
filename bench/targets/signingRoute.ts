import Router from '@koa/router';
import Koa from 'koa';
import { type Address, type Hex, numberToHex } from 'viem';
import { loadDeployments } from '../../chain/deployments';
import { encodePaymasterData, sponsorshipHash, type SponsorshipTerms } from '../../chain/paymasterData';
import { paymasterFromContracts } from '../../chain/paymasters';
import { loadConfig, requireSetting } from '../../config';
import { sponsorshipWindow } from '../../paymaster/rpc/sponsorshipWindow';
import { MINIMUM_PAYMASTER_GAS } from '../../chain/paymasterData';
import { fastLocalAccount } from '../../signer/fastAccount';

/**
 * Baselines for the paymaster benchmark: the cost floor of producing a paymaster signature over HTTP
 * (bench/targets/signOnly.ts), and of one that is also recorded durably (signAndInsert.ts).
 * One Koa route, `POST /sign`, takes the same JSON-RPC body wallets send to `pm_getPaymasterData`
 * (`params = [userOp, entryPoint, chainId]`), computes the same sponsorship hash the signing service
 * signs (chain/paymasterData.ts `sponsorshipHash`, sponsored mode, the signer's gas floors and the
 * API's validity window) and signs it with the signer key (SIGNER_PRIVATE_KEY) exactly as the signing
 * service does (signer/fastAccount.ts: libsecp256k1, the fastest signing measured here). No policy,
 * no database, no second hop, no deposit read.
 */
/** What the route does with a signature before answering it (nothing for the sign-only floor). */
export type RecordSignature = (record: { sender: Address; nonce: Hex; paymasterData: Hex }) => Promise<void>;

const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' });
// The signing service's own signer (libsecp256k1), so this stays the floor of a signature over HTTP.
const { account } = fastLocalAccount(requireSetting(config, 'SIGNER_PRIVATE_KEY') as Hex);
const deployments = loadDeployments(config.DEPLOYMENTS_FILE);
const minimumGas = MINIMUM_PAYMASTER_GAS.sponsored;

interface RpcUserOperation {
  sender: Address;
  nonce: Hex;
  callData: Hex;
  callGasLimit: Hex;
  verificationGasLimit: Hex;
  preVerificationGas: Hex;
  maxFeePerGas: Hex;
  maxPriorityFeePerGas: Hex;
}

async function readBody(request: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Serves `POST /sign` on a free port, announcing it with `LISTENING <port>` (bench/lib/target.ts). */
export function serveSigningRoute(recordSignature?: RecordSignature, onStop?: () => Promise<void>): void {
  const router = new Router();
  router.post('/sign', async (ctx) => {
    const request = JSON.parse(await readBody(ctx.req)) as {
      id: number | string;
      params: [RpcUserOperation, Address, Hex | number];
    };
    const [userOp] = request.params;
    const chainId = Number(request.params[2]);
    const paymaster = paymasterFromContracts(
      deployments.find((chain) => chain.chainId === chainId)?.contracts,
      '0.8',
    );
    if (!paymaster) return ctx.throw(400, `no paymaster for chain ${chainId}`);
    const terms: SponsorshipTerms = { mode: 'sponsored', ...sponsorshipWindow(new Date()) };
    const hash = sponsorshipHash({
      chainId,
      paymaster,
      terms,
      userOperation: {
        sender: userOp.sender,
        nonce: BigInt(userOp.nonce),
        callData: userOp.callData,
        callGasLimit: BigInt(userOp.callGasLimit),
        verificationGasLimit: BigInt(userOp.verificationGasLimit),
        preVerificationGas: BigInt(userOp.preVerificationGas),
        maxFeePerGas: BigInt(userOp.maxFeePerGas),
        maxPriorityFeePerGas: BigInt(userOp.maxPriorityFeePerGas),
        paymasterVerificationGasLimit: minimumGas.verification,
        paymasterPostOpGasLimit: minimumGas.postOp,
      },
    });
    const signature = await account.signMessage({ message: { raw: hash } });
    const paymasterData = encodePaymasterData(terms, signature);
    if (recordSignature) await recordSignature({ sender: userOp.sender, nonce: userOp.nonce, paymasterData });
    ctx.body = {
      jsonrpc: '2.0',
      id: request.id,
      result: {
        paymaster,
        paymasterData,
        paymasterVerificationGasLimit: numberToHex(minimumGas.verification),
        paymasterPostOpGasLimit: numberToHex(minimumGas.postOp),
      },
    };
  });

  const koa = new Koa();
  koa.use(router.routes()).use(router.allowedMethods());
  const server = koa.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => void (onStop ?? (() => Promise.resolve()))().finally(() => process.exit(0)));
  });
}
