import fc from 'fast-check';
import { type Address, type Hex, decodeFunctionData, encodeFunctionData, getAddress, parseAbi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { decodeDelegations, hashDelegation } from '@metamask/smart-accounts-kit/utils';
import { delegationFrameworkFromContracts } from '../../chain/delegationFramework';
import { type TestApp, startTestApp } from '../harness/app';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { deployFundedDeleGator } from '../delegation/delegatorAccounts';
import {
  ExecutionMode,
  type KitDelegation,
  type RedemptionWrapper,
  redeemTransfer,
  transferCall,
  rootTransferDelegation,
  signedWithKit,
  wrapRedemption,
} from '../delegation/delegatedTransfers';
import { addDenyRule, allowContract, createPaymasterClient, paymasterRpc } from './paymasterApi';
import {
  OP_CHARGED_USD_MICRO,
  OP_COST_USD_MICRO,
  freshSender,
  manualClock,
  signedDataRequest,
} from './signedDataRequests';
import { limitCountersUsage } from '../../db/paymasterLimits';
import { decodePaymasterData } from '../../chain/paymasterData';

/**
 * Delegated ERC-20 transfers (SPEC sponsorship rule 7) through the real paymaster RPC, with delegations
 * built and signed by MetaMask's toolkit and owners' signatures verified on a local chain: what is signed
 * (and recorded with `delegated_by:<owner>`), each refused shape with its named reason (never signed,
 * never consuming a limit), deny rules and per-account limits for the owner, limits under 50 concurrent
 * requests, and a property over mutated redemption call data. The API's clock runs on days of its own.
 */

const CHAIN_ID = 84532;
const stack = testStack();
const chain = stack.chains.find((candidate) => candidate.chainId === CHAIN_ID)!;
const framework = delegationFrameworkFromContracts(chain.contracts)!;
const DELEGATION_MANAGER = framework.delegationManager;
const TOKEN: Address = getAddress('0x7000000000000000000000000000000000000007');
const PAYEE: Address = getAddress('0x9000000000000000000000000000000000000009');

const clock = manualClock('2032-04-01T12:00:00.000Z');
const nowSec = () => Math.floor(clock.now().getTime() / 1000);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ LOG_LEVEL: 'warn' }, { now: clock.now });
}, 240_000);
afterAll(() => app?.close());

interface Sponsor {
  merchant: SignedInMerchant;
  clientId: string;
}

async function sponsorOfToken(): Promise<Sponsor> {
  const merchant = await signInNewMerchant(app);
  const { clientId } = await createPaymasterClient(app, merchant, { allowedChainIds: [CHAIN_ID] });
  await allowContract(app, merchant, CHAIN_ID, TOKEN);
  return { merchant, clientId };
}

/** An owner (an EOA: ECDSA) and a grant of 100 base units of TOKEN to PAYEE for `sender`, signed by it. */
interface Owner {
  privateKey: Hex;
  address: Address;
}
const newOwner = (): Owner => {
  const privateKey = generatePrivateKey();
  return { privateKey, address: privateKeyToAccount(privateKey).address };
};

async function grant(
  owner: Owner,
  sender: Address,
  {
    delegator = owner.address,
    chainId = CHAIN_ID,
    ...terms
  }: Partial<Parameters<typeof rootTransferDelegation>[1]> & { chainId?: number } = {},
): Promise<KitDelegation> {
  const unsigned = rootTransferDelegation(framework, {
    delegator,
    delegate: sender,
    token: TOKEN,
    allowance: 100n,
    payee: PAYEE,
    expiresAt: nowSec() + 3600,
    redeemer: sender,
    nonce: 0n,
    ...terms,
  });
  return signedWithKit(owner.privateKey, unsigned, { chainId, delegationManager: DELEGATION_MANAGER });
}

const transferOf = (delegations: KitDelegation[], amount = 40n, mode?: ExecutionMode) =>
  redeemTransfer({ delegations, token: TOKEN, payee: PAYEE, amount, ...(mode && { mode }) });

function delegatedRequest(
  sender: Address,
  callData: Hex,
  { id = 1, nonce = 0 }: { id?: number; nonce?: number } = {},
) {
  return signedDataRequest({ id, sender, nonce, chainId: CHAIN_ID, fields: { callData } });
}

async function usageOf(sponsor: Sponsor, sender: Address) {
  return app.db
    .selectFrom('paymaster_usage')
    .select(['status', 'reason', 'targets', 'sender'])
    .where('merchant_id', '=', sponsor.merchant.merchantId)
    .where('sender', '=', sender.toLowerCase())
    .orderBy('created_at', 'asc')
    .execute();
}

async function setLimits(sponsor: Sponsor, limits: Record<string, unknown>) {
  const response = await app.request('/v1/paymaster/limits', {
    method: 'PATCH',
    headers: sponsor.merchant.auth,
    json: limits,
  });
  expect(response.status).toBe(200);
}

describe('a delegated transfer the paymaster signs', () => {
  it.each(['execute', 'executeTuple', 'erc7579Single'] as const)(
    'in a %s: signed data, a submitted row keeping the sender with reason delegated_by:<owner>, targets manager then token',
    async (wrapper: RedemptionWrapper) => {
      clock.set('2032-04-01T12:00:00.000Z');
      const sponsor = await sponsorOfToken();
      const owner = newOwner();
      const sender = freshSender();
      const callData = wrapRedemption(wrapper, DELEGATION_MANAGER, transferOf([await grant(owner, sender)]));
      const response = await paymasterRpc(app, sponsor.clientId, delegatedRequest(sender, callData));
      expect(response.body.error).toBeUndefined();
      expect(response.body.result.paymasterData).toMatch(/^0x[0-9a-f]+$/);
      expect(await usageOf(sponsor, sender)).toEqual([
        {
          status: 'submitted',
          reason: `delegated_by:${owner.address.toLowerCase()}`,
          targets: [DELEGATION_MANAGER.toLowerCase(), TOKEN.toLowerCase()],
          sender: sender.toLowerCase(),
        },
      ]);
    },
  );

  it('from a deployed DeleGator: the signature verifies through its ERC-1271; another key’s does not', async () => {
    clock.set('2032-04-01T12:00:00.000Z');
    const sponsor = await sponsorOfToken();
    const owner = newOwner();
    const { account } = await deployFundedDeleGator(chain, owner.address, 0n);
    const sender = freshSender();
    const byOwner = await grant(owner, sender, { delegator: account.address });
    const signed = await paymasterRpc(
      app,
      sponsor.clientId,
      delegatedRequest(sender, wrapRedemption('execute', DELEGATION_MANAGER, transferOf([byOwner]))),
    );
    expect(signed.body.result).toBeDefined();

    const byStranger = await grant(newOwner(), sender, { delegator: account.address });
    const refused = await paymasterRpc(
      app,
      sponsor.clientId,
      delegatedRequest(sender, wrapRedemption('execute', DELEGATION_MANAGER, transferOf([byStranger])), {
        nonce: 1,
      }),
    );
    expect(refused.body.error).toEqual({
      code: -32602,
      message: expect.stringMatching(
        /^Policy denied: paymaster_target_not_allowed: delegated transfer: .*ERC-1271/,
      ),
    });
    expect((await usageOf(sponsor, sender)).map((row) => [row.status, row.reason])).toEqual([
      ['submitted', `delegated_by:${account.address.toLowerCase()}`],
      ['denied_target', 'delegation_signature_invalid'],
    ]);
  });
});

describe('a chain that cannot be read', () => {
  it('answers -32603 paymaster_upstream_error with a denied_upstream row, not a verdict on the delegation', async () => {
    clock.set('2032-04-10T12:00:00.000Z');
    // The same database and deployments, but chain 84532's RPC points at a port nothing listens on.
    const unreachable = await startTestApp(
      { LOG_LEVEL: 'silent', [`RPC_URL_${CHAIN_ID}`]: 'http://127.0.0.1:9/' },
      { now: clock.now },
    );
    try {
      const merchant = await signInNewMerchant(unreachable);
      const { clientId } = await createPaymasterClient(unreachable, merchant, {
        allowedChainIds: [CHAIN_ID],
      });
      await allowContract(unreachable, merchant, CHAIN_ID, TOKEN);
      const owner = newOwner();
      const sender = freshSender();
      const callData = wrapRedemption(
        'execute',
        DELEGATION_MANAGER,
        transferOf([await grant(owner, sender)]),
      );
      const response = await paymasterRpc(unreachable, clientId, {
        ...delegatedRequest(sender, callData),
        method: 'pm_getPaymasterStubData',
      });
      expect(response.body.error).toEqual({
        code: -32603,
        message: `paymaster_upstream_error: chain ${CHAIN_ID} could not be read to verify the delegation; retry later`,
      });
      expect(await usageOf({ merchant, clientId }, sender)).toMatchObject([
        { status: 'denied_upstream', reason: 'delegation_chain_unavailable' },
      ]);
    } finally {
      await unreachable.close();
    }
  });
});

describe('what a signed delegated transfer counts and how long its data is valid', () => {
  it('holds one operation’s cost against each budget once, and against both the sender’s and the owner’s caps', async () => {
    clock.set('2032-04-08T12:00:00.000Z');
    const sponsor = await sponsorOfToken();
    const owner = newOwner();
    const sender = freshSender();
    const callData = wrapRedemption('execute', DELEGATION_MANAGER, transferOf([await grant(owner, sender)]));
    expect(
      (await paymasterRpc(app, sponsor.clientId, delegatedRequest(sender, callData))).body.result,
    ).toBeDefined();

    const day = new Date('2032-04-08T00:00:00.000Z');
    const hour = new Date('2032-04-08T12:00:00.000Z');
    const { merchantId } = sponsor.merchant;
    const [sender_, owner_] = [sender.toLowerCase(), owner.address.toLowerCase()];
    const usage = await limitCountersUsage(
      app.db,
      [
        { key: 'platform_budget_usd:testnet', windowStart: day },
        { key: `merchant_budget_usd:testnet:${merchantId}`, windowStart: day },
        { key: `sender_usd:${merchantId}:${sender_}`, windowStart: day },
        { key: `sender_usd:${merchantId}:${owner_}`, windowStart: day },
        { key: `sender_ops:${merchantId}:${sender_}`, windowStart: hour },
        { key: `sender_ops:${merchantId}:${owner_}`, windowStart: hour },
      ],
      clock.now(),
    );
    expect(usage).toEqual([
      OP_COST_USD_MICRO,
      OP_COST_USD_MICRO,
      OP_CHARGED_USD_MICRO,
      OP_CHARGED_USD_MICRO,
      1n,
      1n,
    ]);
  });

  it('paymaster data of a delegation expiring within the usual 600 s is valid until the second before its expiry', async () => {
    clock.set('2032-04-09T12:00:00.000Z');
    const sponsor = await sponsorOfToken();
    const owner = newOwner();
    const sender = freshSender();
    const expiresAt = nowSec() + 120;
    const callData = wrapRedemption(
      'execute',
      DELEGATION_MANAGER,
      transferOf([await grant(owner, sender, { expiresAt })]),
    );
    const { result } = (await paymasterRpc(app, sponsor.clientId, delegatedRequest(sender, callData))).body;
    expect(decodePaymasterData(result.paymasterData)).toMatchObject({
      validAfter: 0,
      validUntil: expiresAt - 1,
    });
  });
});

const BATCH_ABI = parseAbi(['function executeBatch(address[] targets, uint256[] values, bytes[] datas)']);
const ERC7579_EXECUTE = parseAbi(['function execute(bytes32 mode, bytes executionCalldata)']);

describe('refused delegated transfers: each shape its named reason, none signed, none consuming a limit', () => {
  type Case = [string, (owner: Owner, sender: Address) => Promise<Hex>, string];
  const wrapped = (data: Hex) => wrapRedemption('execute', DELEGATION_MANAGER, data);
  const cases: Case[] = [
    [
      'a batch containing a redemption',
      async (owner, sender) =>
        encodeFunctionData({
          abi: BATCH_ABI,
          functionName: 'executeBatch',
          args: [[DELEGATION_MANAGER], [0n], [transferOf([await grant(owner, sender)])]],
        }),
      'delegated_batch',
    ],
    [
      'redelegation (a chain of two delegations)',
      async (owner, sender) => {
        const root = await grant(owner, sender);
        const leaf = await signedWithKit(
          owner.privateKey,
          { ...(await grant(owner, sender)), authority: hashDelegation(root) },
          { chainId: CHAIN_ID, delegationManager: DELEGATION_MANAGER },
        );
        return wrapped(transferOf([leaf, root]));
      },
      'delegation_redelegation',
    ],
    [
      'a non-root authority',
      async (owner, sender) => {
        const unsigned = { ...(await grant(owner, sender)), authority: `0x${'12'.repeat(32)}` as Hex };
        const delegation = await signedWithKit(owner.privateKey, unsigned, {
          chainId: CHAIN_ID,
          delegationManager: DELEGATION_MANAGER,
        });
        return wrapped(transferOf([delegation]));
      },
      'delegation_not_root',
    ],
    [
      'another execution mode of the redemption (SingleTry)',
      async (owner, sender) =>
        wrapped(transferOf([await grant(owner, sender)], 40n, ExecutionMode.SingleTry)),
      'delegation_execution_mode',
    ],
    [
      'another execution mode of the account (ERC-7579 SingleTry)',
      async (owner, sender) =>
        encodeFunctionData({
          abi: ERC7579_EXECUTE,
          functionName: 'execute',
          args: [
            ExecutionMode.SingleTry,
            `${DELEGATION_MANAGER}${'00'.repeat(32)}${transferOf([await grant(owner, sender)]).slice(2)}`,
          ],
        }),
      'unsupported_execution_mode',
    ],
    [
      'an unrecognised caveat',
      async (owner, sender) => {
        const base = await grant(owner, sender);
        const unsigned = {
          ...base,
          caveats: [
            ...base.caveats,
            { enforcer: framework.simpleFactory, terms: '0x' as Hex, args: '0x' as Hex },
          ],
        };
        return wrapped(
          transferOf([
            await signedWithKit(owner.privateKey, unsigned, {
              chainId: CHAIN_ID,
              delegationManager: DELEGATION_MANAGER,
            }),
          ]),
        );
      },
      'delegation_caveats_unrecognised',
    ],
    [
      'a missing caveat (no expiry)',
      async (owner, sender) => {
        const base = await grant(owner, sender);
        const unsigned = {
          ...base,
          caveats: base.caveats.filter(
            (caveat) => getAddress(caveat.enforcer) !== framework.timestampEnforcer,
          ),
        };
        return wrapped(
          transferOf([
            await signedWithKit(owner.privateKey, unsigned, {
              chainId: CHAIN_ID,
              delegationManager: DELEGATION_MANAGER,
            }),
          ]),
        );
      },
      'delegation_caveat_missing',
    ],
    [
      'a signature for another chain',
      async (owner, sender) => wrapped(transferOf([await grant(owner, sender, { chainId: 1 })])),
      'delegation_signature_invalid',
    ],
    [
      'an expired delegation',
      async (owner, sender) => wrapped(transferOf([await grant(owner, sender, { expiresAt: nowSec() - 1 })])),
      'delegation_expired',
    ],
    [
      'an amount over the allowance',
      async (owner, sender) => wrapped(transferOf([await grant(owner, sender)], 101n)),
      'delegation_allowance_exceeded',
    ],
    [
      'a redeemer other than the sender',
      async (owner, sender) => wrapped(transferOf([await grant(owner, sender, { redeemer: freshSender() })])),
      'delegation_redeemer_not_sender',
    ],
  ];

  let sponsor: Sponsor;
  const owner = newOwner();
  const sender = freshSender();
  beforeAll(async () => {
    clock.set('2032-04-02T12:00:00.000Z');
    sponsor = await sponsorOfToken();
    // One operation per hour for the sender (and so for the owner): a refusal that consumed it would show.
    await setLimits(sponsor, { perSenderHourlyOps: 1 });
  });

  it.each(cases)('%s', async (_name, callData, reason) => {
    clock.set('2032-04-02T12:00:00.000Z');
    const response = await paymasterRpc(
      app,
      sponsor.clientId,
      delegatedRequest(sender, await callData(owner, sender)),
    );
    expect(response.body.result).toBeUndefined();
    expect(response.body.error).toEqual({
      code: -32602,
      message: expect.stringMatching(/^Policy denied: paymaster_target_not_allowed: /),
    });
    const rows = await usageOf(sponsor, sender);
    expect(rows.at(-1)).toMatchObject({ status: 'denied_target', reason });
  });

  it('after every refusal the sender and the owner still have their one operation: a valid transfer signs', async () => {
    clock.set('2032-04-02T12:00:00.000Z');
    const rows = await usageOf(sponsor, sender);
    expect(rows).toHaveLength(cases.length);
    expect(rows.every((row) => row.status === 'denied_target')).toBe(true);
    const valid = wrapRedemption('execute', DELEGATION_MANAGER, transferOf([await grant(owner, sender)]));
    const response = await paymasterRpc(app, sponsor.clientId, delegatedRequest(sender, valid));
    expect(response.body.result).toBeDefined();
  });
});

describe('deny rules and per-account limits apply to the owner as well as the sender', () => {
  it('a sender deny rule on the owner’s address blocks its delegates: paymaster_blocked_by_merchant_rule', async () => {
    clock.set('2032-04-03T12:00:00.000Z');
    const sponsor = await sponsorOfToken();
    const owner = newOwner();
    await addDenyRule(app, sponsor.merchant, { chainId: CHAIN_ID, kind: 'sender', address: owner.address });
    const sender = freshSender();
    const response = await paymasterRpc(
      app,
      sponsor.clientId,
      delegatedRequest(
        sender,
        wrapRedemption('execute', DELEGATION_MANAGER, transferOf([await grant(owner, sender)])),
      ),
    );
    expect(response.body.error).toEqual({
      code: -32600,
      message: `Policy denied: paymaster_blocked_by_merchant_rule: delegated owner ${owner.address} is blocked by a deny rule on chain ${CHAIN_ID}`,
    });
    expect((await usageOf(sponsor, sender))[0]).toMatchObject({
      status: 'denied_merchant_rule',
      reason: 'delegated_owner_denied',
    });
  });

  it('two sessions of one owner share the owner’s hourly operations: the third transfer is refused naming the delegated owner', async () => {
    clock.set('2032-04-04T12:00:00.000Z');
    const sponsor = await sponsorOfToken();
    await setLimits(sponsor, { perSenderHourlyOps: 2 });
    const owner = newOwner();
    const [first, second] = [freshSender(), freshSender()];
    const send = async (sender: Address, nonce = 0) =>
      paymasterRpc(
        app,
        sponsor.clientId,
        delegatedRequest(
          sender,
          wrapRedemption('execute', DELEGATION_MANAGER, transferOf([await grant(owner, sender)])),
          { nonce },
        ),
      );
    expect((await send(first)).body.result).toBeDefined();
    expect((await send(second)).body.result).toBeDefined();
    const third = await send(first, 1);
    expect(third.body.error).toEqual({
      code: -32600,
      message: `Policy denied: paymaster_rate_limit_exceeded: delegated owner ${owner.address.toLowerCase()} reached its limit of 2 operations per hour (merchant-configured cap)`,
    });
  });
});

describe('50 concurrent delegated requests against per-sender and owner limits of 5', () => {
  const N = 5;
  const REQUESTS = 50;

  async function fire(sponsor: Sponsor, requests: { sender: Address; callData: Hex; nonce: number }[]) {
    const responses = await Promise.all(
      requests.map(({ sender, callData, nonce }, index) =>
        paymasterRpc(app, sponsor.clientId, delegatedRequest(sender, callData, { id: index, nonce })),
      ),
    );
    expect(responses.every((response) => response.status === 200)).toBe(true);
    return {
      signed: responses.filter((response) => response.body.result !== undefined).length,
      refused: responses.filter((response) =>
        /paymaster_rate_limit_exceeded/.test(response.body.error?.message ?? ''),
      ).length,
    };
  }

  it('one session sender: exactly 5 signed, 45 refused', async () => {
    clock.set('2032-04-05T12:00:00.000Z');
    const sponsor = await sponsorOfToken();
    await setLimits(sponsor, { perSenderHourlyOps: N });
    const owner = newOwner();
    const sender = freshSender();
    const callData = wrapRedemption('execute', DELEGATION_MANAGER, transferOf([await grant(owner, sender)]));
    const outcome = await fire(
      sponsor,
      Array.from({ length: REQUESTS }, (_, nonce) => ({ sender, callData, nonce })),
    );
    expect(outcome).toEqual({ signed: N, refused: REQUESTS - N });
  });

  it('50 session senders of one owner: exactly 5 signed (the owner’s limit), 45 refused', async () => {
    clock.set('2032-04-06T12:00:00.000Z');
    const sponsor = await sponsorOfToken();
    await setLimits(sponsor, { perSenderHourlyOps: N });
    const owner = newOwner();
    const requests = await Promise.all(
      Array.from({ length: REQUESTS }, async () => {
        const sender = freshSender();
        const callData = wrapRedemption(
          'execute',
          DELEGATION_MANAGER,
          transferOf([await grant(owner, sender)]),
        );
        return { sender, callData, nonce: 0 };
      }),
    );
    expect(await fire(sponsor, requests)).toEqual({ signed: N, refused: REQUESTS - N });
    const rows = await app.db
      .selectFrom('paymaster_usage')
      .select(['status', 'reason'])
      .where('merchant_id', '=', sponsor.merchant.merchantId)
      .execute();
    expect(rows.filter((row) => row.status === 'submitted')).toHaveLength(N);
    expect(
      rows
        .filter((row) => row.status === 'submitted')
        .every((row) => row.reason === `delegated_by:${owner.address.toLowerCase()}`),
    ).toBe(true);
  });
});

describe('property: nothing outside the accepted shape is signed', () => {
  it('a mutated redemption is signed only when it is still this grant’s transfer to the payee within the allowance', async () => {
    clock.set('2032-04-07T12:00:00.000Z');
    const sponsor = await sponsorOfToken();
    const owner = newOwner();
    const sender = freshSender();
    const delegation = await grant(owner, sender);
    const accepted = transferOf([delegation]);
    const delegationHash = hashDelegation(delegation).toLowerCase();
    const bytes = (hex: Hex) => Buffer.from(hex.slice(2), 'hex');

    // Mutations: a byte changed, bytes cut off or inserted, a 32-byte word replaced (lengths, offsets, amounts).
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
      fc.record({
        kind: fc.constant('insert' as const),
        at: fc.nat(),
        byte: fc.integer({ min: 0, max: 255 }),
      }),
      fc.record({
        kind: fc.constant('word' as const),
        at: fc.nat(),
        word: fc.oneof(fc.bigInt(0n, 300n), fc.bigInt(0n, 2n ** 256n - 1n)),
      }),
      // The transfer's amount word itself: within the allowance or over it.
      fc.record({ kind: fc.constant('amount' as const), word: fc.bigInt(0n, 200n) }),
    );
    type Mutation =
      | { kind: 'flip' | 'cut' | 'insert'; at: number; byte?: number }
      | { kind: 'word'; at: number; word: bigint }
      | { kind: 'amount'; word: bigint };
    // Where the transfer's amount word sits in the accepted call data.
    const amountWordAt = accepted.indexOf(transferCall(PAYEE, 40n).slice(2)) / 2 - 1 + 4 + 32;
    const mutate = (data: Hex, change: Mutation): Hex => {
      const buffer = bytes(data);
      if (buffer.length < 32) return data;
      if (change.kind === 'amount') {
        if (amountWordAt + 32 > buffer.length) return data;
        Buffer.from(change.word.toString(16).padStart(64, '0'), 'hex').copy(buffer, amountWordAt);
        return `0x${buffer.toString('hex')}`;
      }
      const at = change.at % buffer.length;
      switch (change.kind) {
        case 'flip':
          buffer[at] = change.byte!;
          return `0x${buffer.toString('hex')}`;
        case 'cut':
          return `0x${buffer.subarray(0, at).toString('hex')}`;
        case 'insert':
          return `0x${Buffer.concat([buffer.subarray(0, at), Buffer.from([change.byte!]), buffer.subarray(at)]).toString('hex')}`;
        case 'word': {
          const word = 4 + 32 * Math.floor(at / 32);
          const replaced = Buffer.from(change.word.toString(16).padStart(64, '0'), 'hex');
          replaced.copy(buffer, Math.min(word, buffer.length - 32));
          return `0x${buffer.toString('hex')}`;
        }
      }
    };

    let nonce = 0;
    const signedAmounts: bigint[] = [];
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (changes) => {
        const data = changes.reduce((current: Hex, change) => mutate(current, change), accepted);
        nonce += 1;
        const response = await paymasterRpc(
          app,
          sponsor.clientId,
          delegatedRequest(sender, wrapRedemption('execute', DELEGATION_MANAGER, data), { nonce }),
        );
        expect(response.status).toBe(200);
        if (response.body.result === undefined) return;
        // Signed: it must decode, independently of the policy, to this very delegation (same hash and
        // signature) redeeming one SingleDefault transfer of TOKEN to PAYEE of at most the allowance.
        const decoded = decodeRedemptionIndependently(data);
        expect(decoded).toMatchObject({
          contexts: 1,
          delegationHashes: [delegationHash],
          signature: delegation.signature,
          mode: ExecutionMode.SingleDefault,
          target: TOKEN.toLowerCase(),
          value: 0n,
          payee: PAYEE.toLowerCase(),
        });
        expect(decoded!.amount <= 100n).toBe(true);
        signedAmounts.push(decoded!.amount);
      }),
      {
        numRuns: 150,
        // Always tried: the whole allowance (signed) and one unit over it (refused).
        examples: [[[{ kind: 'amount', word: 100n }]], [[{ kind: 'amount', word: 101n }]]],
      },
    );
    expect(signedAmounts).toContain(100n);
  }, 240_000);
});

const redeemAbi = parseAbi([
  'function redeemDelegations(bytes[] contexts, bytes32[] modes, bytes[] executions)',
]);
const transferAbi = parseAbi(['function transfer(address to, uint256 amount)']);

/** The redemption read with the toolkit's decoders and viem, without the policy's decoder. */
function decodeRedemptionIndependently(data: Hex) {
  const { args } = decodeFunctionData({ abi: redeemAbi, data });
  const [contexts, modes, executions] = args;
  const delegations = decodeDelegations(contexts[0]!);
  const execution = executions[0]!;
  const transfer = decodeFunctionData({ abi: transferAbi, data: `0x${execution.slice(106)}` });
  return {
    contexts: contexts.length,
    delegationHashes: delegations.map((delegation) => hashDelegation(delegation).toLowerCase()),
    signature: delegations[0]?.signature,
    mode: modes[0],
    target: `0x${execution.slice(2, 42)}`.toLowerCase(),
    value: BigInt(`0x${execution.slice(42, 106)}`),
    payee: (transfer.args[0] as string).toLowerCase(),
    amount: transfer.args[1] as bigint,
  };
}
