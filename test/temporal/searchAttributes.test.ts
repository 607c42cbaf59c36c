import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { ensureSearchAttributes } from '../../workflowClient/connection';
import { testStack } from '../harness/stack';

describe('search attributes on a fresh Temporal namespace', () => {
  it('the worker registers the four custom attributes once, then finds nothing missing', async () => {
    const connection = await Connection.connect({ address: testStack().temporalAddress });
    try {
      // A new namespace has none of ours, like a new cluster from docker-compose.
      const namespace = `fresh-${randomBytes(4).toString('hex')}`;
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
      let registered: string[] = [];
      for (let attempt = 0; attempt < 50; attempt += 1) {
        try {
          registered = await ensureSearchAttributes(connection, namespace);
          break;
        } catch (error) {
          // The namespace becomes visible to the operator service shortly after registration.
          if (!/not found/i.test((error as Error).message)) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      expect(registered.sort()).toEqual(['ChainId', 'MerchantId', 'SandboxMode', 'SessionStatus']);
      expect(await ensureSearchAttributes(connection, namespace)).toEqual([]);
    } finally {
      await connection.close();
    }
  });
});
