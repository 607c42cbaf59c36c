import { type Address, BaseError, type Hex, getAddress } from 'viem';
import { z } from 'zod';
import {
  DEFAULT_SESSION_KEY_VALIDITY_SEC,
  MAX_SESSION_KEY_VALIDITY_SEC,
  authoriseSessionKey,
  describeSessionKey,
  isAddressInput,
  prepareSessionKey,
} from '../sessionKeys/sessionKeyPermission';
import { type AnyToolDefinition, defineTool } from '../toolDefinition';
import { ToolFailure } from '../toolResults';

/**
 * | create_session_key | POST /v1/merchants/me/smart-accounts (the account must be the merchant's), then local |
 *
 * Two calls: the first generates the key here and answers the permission's typed data; the smart
 * account's owner signs it; the second call (sessionKeyId, ownerSignature) checks the signature on
 * chain and answers the active ERC-7715 permission.
 */
const address = z.string().refine(isAddressInput, 'must be a 0x address');

export const sessionKeyTools: AnyToolDefinition[] = [
  defineTool({
    name: 'create_session_key',
    description:
      'Create a session key on the merchant’s registered DeleGator smart account, with an ERC-7715 permission to transfer up to `allowance` of one ERC-20 token to one payee until it expires. ' +
      'Call once with smartAccount, chainId, token, allowance, payee (validForSec optional) and registrationSignature — the owner’s personal_sign of ' +
      '"StablePay: register smart account <smartAccount, checksummed> on chain <chainId> for merchant <merchant id from get_profile>", which proves the account is the merchant’s: the key is generated and kept on this machine, and the answer carries the typed data the smart account’s owner must sign. ' +
      'Then call again with smartAccount, sessionKeyId and ownerSignature to activate it.',
    inputSchema: {
      smartAccount: address.describe('the merchant’s DeleGator smart account (0x)'),
      chainId: z.number().int().optional(),
      token: address.optional().describe('ERC-20 token the key may transfer'),
      allowance: z.string().optional().describe('total amount in whole tokens, e.g. "25.5"'),
      payee: address.optional().describe('the only recipient of the transfers'),
      validForSec: z
        .number()
        .int()
        .min(60)
        .max(MAX_SESSION_KEY_VALIDITY_SEC)
        .optional()
        .describe(`default ${DEFAULT_SESSION_KEY_VALIDITY_SEC}`),
      registrationSignature: z
        .string()
        .regex(/^0x[0-9a-fA-F]+$/)
        .optional()
        .describe('first call: the owner’s personal_sign of the registration text (see the description)'),
      sessionKeyId: z.string().optional().describe('second call: the id the first call answered'),
      ownerSignature: z
        .string()
        .regex(/^0x[0-9a-fA-F]+$/)
        .optional()
        .describe('second call: the owner’s eth_signTypedData_v4 signature of typedData'),
    },
    annotations: { openWorldHint: true },
    async run(input, { api, credentials, chains, now }) {
      const smartAccount = getAddress(input.smartAccount);
      if (input.sessionKeyId !== undefined || input.ownerSignature !== undefined) {
        if (!input.sessionKeyId || !input.ownerSignature) {
          throw new ToolFailure('activating a session key needs both sessionKeyId and ownerSignature');
        }
        const stored = (await credentials.read()).sessionKeys.find(
          (key) => key.id === input.sessionKeyId && getAddress(key.smartAccount) === smartAccount,
        );
        if (!stored)
          throw new ToolFailure(`no session key ${input.sessionKeyId} for ${smartAccount} on this machine`);
        const chain = chains.get(stored.chainId);
        if (stored.status === 'active') return describeSessionKey(stored, chain);
        const active = await onChain(chain.chainId, () =>
          authoriseSessionKey(chain, stored, input.ownerSignature as Hex),
        );
        await credentials.update((current) => ({
          ...current,
          sessionKeys: current.sessionKeys.map((key) => (key.id === active.id ? active : key)),
        }));
        return describeSessionKey(active, chain);
      }

      const missing = (['chainId', 'token', 'allowance', 'payee', 'registrationSignature'] as const).filter(
        (field) => input[field] === undefined,
      );
      if (missing.length > 0) throw new ToolFailure(`a new session key needs ${missing.join(', ')}`);
      const chain = chains.get(input.chainId!);
      const pending = await onChain(chain.chainId, () =>
        prepareSessionKey({
          chain,
          smartAccount,
          token: getAddress(input.token!) as Address,
          allowance: input.allowance!,
          payee: getAddress(input.payee!) as Address,
          validForSec: input.validForSec ?? DEFAULT_SESSION_KEY_VALIDITY_SEC,
          now: now(),
        }),
      );
      // Checked on chain first (a DeleGator of this chain); then the account must be the merchant's:
      // registering it with the owner's proof of control is idempotent, 403 without a valid proof and
      // 409 when another merchant holds it.
      await api.call({
        method: 'POST',
        path: '/v1/merchants/me/smart-accounts',
        auth: 'jwt',
        body: { address: smartAccount, chainId: input.chainId, signature: input.registrationSignature },
      });
      await credentials.update((current) => ({ ...current, sessionKeys: [...current.sessionKeys, pending] }));
      return describeSessionKey(pending, chain);
    },
  }),
];

/** Runs chain reads, turning an RPC failure into a ToolFailure that names the chain (no URL: it may hold a key). */
async function onChain<T>(chainId: number, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof BaseError) {
      throw new ToolFailure(`chain ${chainId} could not be read: ${error.shortMessage}`);
    }
    throw error;
  }
}
