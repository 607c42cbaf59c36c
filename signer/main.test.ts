import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { ENTRY_POINT_V07_ADDRESS } from '../chain/entryPoints';
import { findFreePort } from '../dev/services/freePort';
import { TEST_STACK_FILE_VARIABLE, testStack } from '../test/harness/stack';

/** `signer/main.ts` as its own process, configured from the environment like every process. */

const root = join(__dirname, '..');
const tsx = require.resolve('tsx/cli');
const SECRET = 'main-process-shared-secret-0123456789';

function signerEnvironment(port: number): NodeJS.ProcessEnv {
  const chain = testStack().chains[0]!;
  return {
    PATH: process.env.PATH,
    LOG_LEVEL: 'info',
    SIGNER_PORT: String(port),
    SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
    SIGNER_SHARED_SECRET: SECRET,
    DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
    [`RPC_URL_${chain.chainId}`]: chain.rpcUrl,
  };
}

async function waitUntilListening(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`signer exited with ${child.exitCode}`);
    try {
      await fetch(url, { method: 'POST' });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error('signer did not listen within 30 s');
}

it('serves signer_signPaymasterData on SIGNER_PORT, logs no secret, and stops on SIGTERM', async () => {
  const port = await findFreePort();
  const child = spawn(process.execPath, [tsx, 'signer/main.ts'], {
    cwd: root,
    env: signerEnvironment(port),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  try {
    const url = `http://127.0.0.1:${port}/rpc`;
    await waitUntilListening(url, child);
    const now = Math.floor(Date.now() / 1000);
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'signer_signPaymasterData',
        params: [
          {
            chainId: testStack().chains[0]!.chainId,
            entryPoint: ENTRY_POINT_V07_ADDRESS,
            entryPointVersion: '0.7',
            userOp: {
              sender: '0x1111111111111111111111111111111111111111',
              nonce: '0x0',
              callData: '0x',
              callGasLimit: '0x186a0',
              verificationGasLimit: '0x186a0',
              preVerificationGas: '0xc350',
              maxFeePerGas: '0x3b9aca00',
              maxPriorityFeePerGas: '0x1',
            },
            mode: 'sponsored',
            validUntil: now + 60,
            validAfter: 0,
          },
        ],
      }),
    });
    const body = (await response.json()) as { result?: { paymaster: string } };
    expect(body.result?.paymaster).toBe(testStack().chains[0]!.contracts.paymasterV07);
    expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(401);
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  expect(child.exitCode).toBe(0);
  expect(output).toContain('signer listening');
  expect(output).not.toContain(LOCAL_PAYMASTER_SIGNER.privateKey.slice(2));
  expect(output).not.toContain(SECRET);
});

it('without SIGNER_PRIVATE_KEY the process stops with status 1 naming the variable', async () => {
  const { SIGNER_PRIVATE_KEY: _, ...environment } = signerEnvironment(await findFreePort());
  const result = spawnSync(process.execPath, [tsx, 'signer/main.ts'], {
    cwd: root,
    env: environment,
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(result.status).toBe(1);
  expect(result.stderr).toContain('SIGNER_PRIVATE_KEY: is required for this process');
});
