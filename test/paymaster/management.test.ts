import { randomUUID } from 'node:crypto';
import { getAddress } from 'viem';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { insertUsageRecord, recordUserOperationReceipt } from '../../db/paymasterUsage';
import { createPaymasterClient, paymasterRpc, usageRows } from './paymasterApi';

const CONTRACT = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';

describe('paymaster management routes (JWT)', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let other: SignedInMerchant;
  beforeAll(async () => {
    app = await startTestApp();
    [merchant, other] = await Promise.all([signInNewMerchant(app), signInNewMerchant(app)]);
  });
  afterAll(() => app.close());

  const call = (who: SignedInMerchant, method: string, path: string, json?: unknown) =>
    app.request(path, { method, headers: who.auth, ...(json !== undefined && { json }) });

  describe('clients', () => {
    it('create answers 201 { client } with a pmc_test_ id and the defaults', async () => {
      const response = await call(merchant, 'POST', '/v1/paymaster/clients', {
        label: 'web app',
        allowedChainIds: [84532, 421614],
      });
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        client: {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          clientId: expect.stringMatching(/^pmc_test_[0-9a-f]{32}$/),
          label: 'web app',
          environment: 'test',
          allowedOrigins: [],
          allowedChainIds: [84532, 421614],
          gasMode: 'sponsored',
          userPaidMaxOperationUsd: null,
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
          updatedAt: expect.any(String),
          revokedAt: null,
        },
      });
    });

    it('a live environment gets a pmc_live_ id; origins are normalised and duplicates dropped', async () => {
      const response = await call(merchant, 'POST', '/v1/paymaster/clients', {
        label: 'shop',
        environment: 'live',
        allowedChainIds: [8453, 8453, 1],
        allowedOrigins: [
          'https://Shop.Example.com:443',
          'https://shop.example.com/',
          'http://localhost:5173',
        ],
        gasMode: 'both',
      });
      expect(response.status).toBe(201);
      expect(response.body.client).toMatchObject({
        clientId: expect.stringMatching(/^pmc_live_[0-9a-f]{32}$/),
        environment: 'live',
        allowedChainIds: [8453, 1],
        allowedOrigins: ['https://shop.example.com', 'http://localhost:5173'],
        gasMode: 'both',
      });
    });

    it.each([
      ['no label', { allowedChainIds: [84532] }, 'label'],
      ['empty allowedChainIds', { label: 'x', allowedChainIds: [] }, 'allowedChainIds'],
      ['no allowedChainIds', { label: 'x' }, 'allowedChainIds'],
      ['an unsupported chain', { label: 'x', allowedChainIds: [84532, 5] }, 'allowedChainIds.1'],
      ['a chain id as a string', { label: 'x', allowedChainIds: ['84532'] }, 'allowedChainIds.0'],
      [
        'an origin with a path',
        { label: 'x', allowedChainIds: [84532], allowedOrigins: ['https://a.example/app'] },
        'allowedOrigins.0',
      ],
      [
        'an origin that is not a URL',
        { label: 'x', allowedChainIds: [84532], allowedOrigins: ['example.com'] },
        'allowedOrigins.0',
      ],
      ['an unknown gasMode', { label: 'x', allowedChainIds: [84532], gasMode: 'free' }, 'gasMode'],
      [
        'a user-paid cap that is not a positive USD amount',
        { label: 'x', allowedChainIds: [84532], userPaidMaxOperationUsd: '-1' },
        'userPaidMaxOperationUsd',
      ],
      [
        'an unknown environment',
        { label: 'x', allowedChainIds: [84532], environment: 'prod' },
        'environment',
      ],
      [
        'an unknown field',
        { label: 'x', allowedChainIds: [84532], clientId: 'pmc_test_mine' },
        'Unrecognized key',
      ],
    ])('create with %s answers 400 naming the field', async (_case, body, field) => {
      const response = await call(merchant, 'POST', '/v1/paymaster/clients', body);
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/^Validation failed: /);
      expect(response.body.message).toContain(field);
    });

    it("list answers { data } with the merchant's active clients only", async () => {
      const mine = await createPaymasterClient(app, merchant, { label: 'listed' });
      const theirs = await createPaymasterClient(app, other, { label: 'foreign' });
      const response = await call(merchant, 'GET', '/v1/paymaster/clients');
      expect(response.status).toBe(200);
      const ids = response.body.data.map((client: { id: string }) => client.id);
      expect(ids).toContain(mine.id);
      expect(ids).not.toContain(theirs.id);
    });

    it('PATCH updates label, origins, chains and gas mode; the environment is fixed', async () => {
      const client = await createPaymasterClient(app, merchant);
      const response = await call(merchant, 'PATCH', `/v1/paymaster/clients/${client.id}`, {
        label: 'renamed',
        allowedOrigins: ['https://dapp.example'],
        allowedChainIds: [11155111],
        gasMode: 'user_paid',
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: client.id,
        clientId: client.clientId,
        label: 'renamed',
        allowedOrigins: ['https://dapp.example'],
        allowedChainIds: [11155111],
        gasMode: 'user_paid',
      });
      expect(
        (await call(merchant, 'PATCH', `/v1/paymaster/clients/${client.id}`, { environment: 'live' })).status,
      ).toBe(400);
      expect((await call(merchant, 'PATCH', `/v1/paymaster/clients/${client.id}`, {})).status).toBe(400);
      expect(
        (await call(merchant, 'PATCH', `/v1/paymaster/clients/${client.id}`, { allowedChainIds: [] })).status,
      ).toBe(400);
    });

    it('DELETE revokes: 200 summary with revokedAt, then the id is unknown everywhere', async () => {
      const client = await createPaymasterClient(app, merchant);
      const revoked = await call(merchant, 'DELETE', `/v1/paymaster/clients/${client.id}`);
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({
        id: client.id,
        clientId: client.clientId,
        revokedAt: expect.stringMatching(/Z$/),
      });

      const list = await call(merchant, 'GET', '/v1/paymaster/clients');
      expect(list.body.data.map((entry: { id: string }) => entry.id)).not.toContain(client.id);
      expect((await call(merchant, 'DELETE', `/v1/paymaster/clients/${client.id}`)).status).toBe(404);
      expect(
        (await call(merchant, 'PATCH', `/v1/paymaster/clients/${client.id}`, { label: 'again' })).status,
      ).toBe(404);
      const rpc = await paymasterRpc(app, client.clientId, {
        jsonrpc: '2.0',
        id: 1,
        method: 'pm_getPaymasterStubData',
        params: [],
      });
      expect(rpc.status).toBe(401);
      expect(rpc.body).toEqual({
        statusCode: 401,
        message: expect.stringMatching(/^paymaster_unauthorized/),
        error: 'Unauthorized',
      });
    });

    it("tenant isolation: another merchant's client answers 404 to PATCH and DELETE and stays untouched", async () => {
      const client = await createPaymasterClient(app, merchant, { label: 'mine' });
      expect(
        (await call(other, 'PATCH', `/v1/paymaster/clients/${client.id}`, { label: 'stolen' })).status,
      ).toBe(404);
      expect((await call(other, 'DELETE', `/v1/paymaster/clients/${client.id}`)).status).toBe(404);
      const list = await call(merchant, 'GET', '/v1/paymaster/clients');
      expect(list.body.data.find((entry: { id: string }) => entry.id === client.id)).toMatchObject({
        label: 'mine',
        revokedAt: null,
      });
    });

    it('a path id that is not a UUID answers 404', async () => {
      expect((await call(merchant, 'DELETE', '/v1/paymaster/clients/pmc_test_abc')).status).toBe(404);
    });
  });

  describe('allowlist', () => {
    it('POST upserts on (chainId, contractAddress): the same pair keeps its id and takes the new label', async () => {
      const first = await call(merchant, 'POST', '/v1/paymaster/allowlist', {
        chainId: 84532,
        contractAddress: CONTRACT,
        label: 'USDC',
      });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        id: expect.any(String),
        chainId: 84532,
        contractAddress: getAddress(CONTRACT),
        label: 'USDC',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const second = await call(merchant, 'POST', '/v1/paymaster/allowlist', {
        chainId: 84532,
        contractAddress: getAddress(CONTRACT),
      });
      expect(second.status).toBe(200);
      expect(second.body).toMatchObject({ id: first.body.id, label: null });
      const otherChain = await call(merchant, 'POST', '/v1/paymaster/allowlist', {
        chainId: 421614,
        contractAddress: CONTRACT,
      });
      expect(otherChain.body.id).not.toBe(first.body.id);

      const list = await call(merchant, 'GET', '/v1/paymaster/allowlist');
      expect(list.status).toBe(200);
      expect(
        list.body.data.filter(
          (entry: { contractAddress: string }) => entry.contractAddress === getAddress(CONTRACT),
        ),
      ).toHaveLength(2);
    });

    it.each([
      ['a malformed address', { chainId: 84532, contractAddress: '0x1234' }, 'contractAddress'],
      ['an unsupported chain', { chainId: 10, contractAddress: CONTRACT }, 'chainId'],
      ['an empty label', { chainId: 84532, contractAddress: CONTRACT, label: ' ' }, 'label'],
    ])('POST with %s answers 400', async (_case, body, field) => {
      const response = await call(merchant, 'POST', '/v1/paymaster/allowlist', body);
      expect(response.status).toBe(400);
      expect(response.body.message).toContain(field);
    });

    it('DELETE answers 204, then 404; another merchant gets 404 and cannot see the entry', async () => {
      const entry = await call(merchant, 'POST', '/v1/paymaster/allowlist', {
        chainId: 11155111,
        contractAddress: CONTRACT,
      });
      expect((await call(other, 'DELETE', `/v1/paymaster/allowlist/${entry.body.id}`)).status).toBe(404);
      const foreignList = await call(other, 'GET', '/v1/paymaster/allowlist');
      expect(foreignList.body.data.map((row: { id: string }) => row.id)).not.toContain(entry.body.id);

      const deleted = await call(merchant, 'DELETE', `/v1/paymaster/allowlist/${entry.body.id}`);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      expect((await call(merchant, 'DELETE', `/v1/paymaster/allowlist/${entry.body.id}`)).status).toBe(404);
      expect((await call(merchant, 'DELETE', `/v1/paymaster/allowlist/${randomUUID()}`)).status).toBe(404);
    });
  });

  describe('deny rules', () => {
    it('POST upserts on (chainId, kind, address); sender and target rules for one address are distinct', async () => {
      const sender = await call(merchant, 'POST', '/v1/paymaster/deny-rules', {
        chainId: 84532,
        kind: 'sender',
        address: CONTRACT,
        label: 'abuser',
      });
      expect(sender.status).toBe(200);
      expect(sender.body).toEqual({
        id: expect.any(String),
        chainId: 84532,
        kind: 'sender',
        address: getAddress(CONTRACT),
        label: 'abuser',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const again = await call(merchant, 'POST', '/v1/paymaster/deny-rules', {
        chainId: 84532,
        kind: 'sender',
        address: getAddress(CONTRACT),
        label: 'renamed',
      });
      expect(again.body).toMatchObject({ id: sender.body.id, label: 'renamed' });
      const target = await call(merchant, 'POST', '/v1/paymaster/deny-rules', {
        chainId: 84532,
        kind: 'target',
        address: CONTRACT,
      });
      expect(target.body.id).not.toBe(sender.body.id);

      const list = await call(merchant, 'GET', '/v1/paymaster/deny-rules');
      expect(list.body.data.map((rule: { id: string }) => rule.id)).toEqual(
        expect.arrayContaining([sender.body.id, target.body.id]),
      );
    });

    it.each([
      ['an unknown kind', { chainId: 84532, kind: 'origin', address: CONTRACT }, 'kind'],
      ['no address', { chainId: 84532, kind: 'sender' }, 'address'],
      ['an unsupported chain', { chainId: 137, kind: 'sender', address: CONTRACT }, 'chainId'],
    ])('POST with %s answers 400', async (_case, body, field) => {
      const response = await call(merchant, 'POST', '/v1/paymaster/deny-rules', body);
      expect(response.status).toBe(400);
      expect(response.body.message).toContain(field);
    });

    it('DELETE answers 204, then 404; another merchant gets 404', async () => {
      const rule = await call(merchant, 'POST', '/v1/paymaster/deny-rules', {
        chainId: 421614,
        kind: 'target',
        address: CONTRACT,
      });
      expect((await call(other, 'DELETE', `/v1/paymaster/deny-rules/${rule.body.id}`)).status).toBe(404);
      expect((await call(other, 'GET', '/v1/paymaster/deny-rules')).body.data).toEqual([]);
      expect((await call(merchant, 'DELETE', `/v1/paymaster/deny-rules/${rule.body.id}`)).status).toBe(204);
      expect((await call(merchant, 'DELETE', `/v1/paymaster/deny-rules/${rule.body.id}`)).status).toBe(404);
    });
  });

  describe('usage', () => {
    let usageMerchant: SignedInMerchant;
    let clientA: string;
    let clientB: string;
    beforeAll(async () => {
      usageMerchant = await signInNewMerchant(app);
      clientA = (await createPaymasterClient(app, usageMerchant, { allowedChainIds: [84532, 421614] }))
        .clientId;
      clientB = (await createPaymasterClient(app, usageMerchant, { allowedChainIds: [84532] })).clientId;
      // Five denials in a known order: three undecodable operations on A, one chain denial on A, one on B.
      // (Parse errors are only counted, not stored: security review II, finding 10.)
      for (let i = 0; i < 3; i++)
        await paymasterRpc(app, clientA, {
          jsonrpc: '2.0',
          id: 1,
          method: 'pm_getPaymasterStubData',
          params: [
            { sender: `0x${'22'.repeat(20)}`, nonce: '0x0', callData: '0xdeadbeef' },
            '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
            84532,
          ],
        });
      await paymasterRpc(app, clientA, {
        jsonrpc: '2.0',
        id: 1,
        method: 'pm_getPaymasterStubData',
        params: [{}, '0x', '0x1'],
      });
      await paymasterRpc(app, clientB, {
        jsonrpc: '2.0',
        id: 1,
        method: 'pm_getPaymasterStubData',
        params: [{}, '0x', 421614],
      });
    });

    it('lists newest first and pages with nextCursor until null', async () => {
      const seen: Record<string, unknown>[] = [];
      let cursor: string | null = null;
      do {
        const response = await call(
          usageMerchant,
          'GET',
          `/v1/paymaster/usage?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(response.status).toBe(200);
        expect(response.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...response.body.data);
        cursor = response.body.nextCursor;
      } while (cursor);
      expect(seen.map((row) => [row.clientId, row.status, row.chainId])).toEqual([
        [clientB, 'denied_chain', 421614],
        [clientA, 'denied_chain', 1],
        [clientA, 'denied_target', 84532],
        [clientA, 'denied_target', 84532],
        [clientA, 'denied_target', 84532],
      ]);
      expect(seen[0]).toEqual({
        id: expect.any(String),
        clientId: clientB,
        method: 'pm_getPaymasterStubData',
        chainId: 421614,
        mode: null,
        status: 'denied_chain',
        reason: 'paymaster_chain_not_allowed',
        sender: null,
        entryPoint: null,
        userOpHash: null,
        targets: [],
        actualGasCost: null,
        actualGasUsed: null,
        usdSnapshot: null,
        policyId: null,
        createdAt: expect.stringMatching(/Z$/),
      });
    });

    it('shows the gas cost and the USD snapshot an operation was priced at', async () => {
      const userOpHash = `0x${'ab'.repeat(32)}`;
      await insertUsageRecord(app.db, {
        merchantId: usageMerchant.merchantId,
        clientId: clientA,
        method: 'pm_getPaymasterData',
        chainId: 84532,
        mode: 'sponsored',
        status: 'submitted',
        reason: null,
        sender: '0x2222222222222222222222222222222222222222',
        entryPoint: '0x0000000071727de22e5e9d8baf0edac6f37da032',
        userOpHash,
        targets: [CONTRACT],
        validUntil: new Date(Date.now() + 600_000),
        usdSnapshot: {
          ethUsdPrice: '3000.5',
          estimatedGasCostWei: '210000000000000',
          estimatedCostUsd: '0.630105',
        },
      });
      await recordUserOperationReceipt(app.db, {
        chainId: 84532,
        entryPoint: '0x0000000071727de22e5e9d8baf0edac6f37da032',
        userOpHash,
        success: true,
        actualGasCost: 190_000_000_000_000n,
        actualGasUsed: 95_000n,
        txHash: `0x${'cd'.repeat(32)}`,
        blockNumber: 7n,
      });
      const [row] = await usageRows(app, usageMerchant, '&status=onchain_success');
      expect(row).toMatchObject({
        userOpHash,
        status: 'onchain_success',
        actualGasCost: '190000000000000',
        actualGasUsed: '95000',
        usdSnapshot: {
          ethUsdPrice: '3000.5',
          estimatedGasCostWei: '210000000000000',
          estimatedCostUsd: '0.630105',
        },
      });
    });

    it('filters by clientId, chainId and status', async () => {
      expect(await usageRows(app, usageMerchant, `&clientId=${clientB}`)).toHaveLength(1);
      expect(await usageRows(app, usageMerchant, '&chainId=1')).toHaveLength(1);
      expect(await usageRows(app, usageMerchant, '&status=denied_target')).toHaveLength(3);
      expect(await usageRows(app, usageMerchant, `&status=denied_chain&clientId=${clientA}`)).toHaveLength(1);
      expect(await usageRows(app, usageMerchant, '&status=submitted')).toHaveLength(0);
      expect(await usageRows(app, usageMerchant, '&mode=user_paid')).toHaveLength(0);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
      [`cursor=${Buffer.from('seq:99999999999999999999').toString('base64url')}`, 'cursor'],
      ['status=approved', 'status'],
      ['mode=free', 'mode'],
      ['chainId=base', 'chainId'],
    ])('answers 400 for %s', async (query, field) => {
      const response = await call(usageMerchant, 'GET', `/v1/paymaster/usage?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.message).toContain(field);
    });

    it('another merchant sees none of these rows, even filtering by the client id', async () => {
      expect(await usageRows(app, other, `&clientId=${clientA}`)).toEqual([]);
    });
  });
});
