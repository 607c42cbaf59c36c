import { z } from 'zod';
import {
  deleteYieldDomain,
  HostnameTakenError,
  insertYieldDomain,
  PendingDomainsCapError,
} from '../../../db/yieldDomains';
import { newVerificationValue, normalizeHostname } from '../../../yield/domainVerification';
import { startDomainVerificationWorkflow } from '../../../workflowClient/yieldWorkflows';
import { withTemporalDeadline } from '../../../workflowClient/connection';
import type { AppContext } from '../../appContext';
import { conflict, notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { YIELD_BASE, requireDeployment } from './deployments/deploymentAccess';
import { domain, toDomain } from './yieldModels';

/**
 * | POST   | /{id}/domains            | attach a custom domain (pending, with its TXT record)  | 201 |
 * | DELETE | /{id}/domains/{domainId} | remove it; its site stops at once                       | 204 |
 *
 * Only a verified domain holds its hostname (409 for anyone else); pending and failed ones hold nothing, and
 * a merchant has at most YIELD_DOMAINS_PENDING_PER_MERCHANT pending (409 past it). A workflow checks the
 * TXT record until it matches (verified; other pending rows of the hostname fail) or seven days pass
 * (failed), then re-checks a verified one every YIELD_DOMAIN_RECHECK_MS and fails it once its record has
 * been missing for YIELD_DOMAIN_LAPSE_GRACE_MS (security review II, finding 1).
 */

const attachBody = z
  .object({
    hostname: z
      .string()
      .max(300)
      .transform((value, ctx) => {
        const normalized = normalizeHostname(value);
        if ('problem' in normalized) {
          ctx.addIssue({ code: 'custom', message: normalized.problem });
          return z.NEVER;
        }
        return normalized.hostname;
      }),
  })
  .strict()
  .meta({ id: 'YieldDomainAttach' });

export function yieldDomainRoutes(app: AppContext): AnyRoute[] {
  const common = { auth: 'jwt', tag: 'Yield deployments', audience: 'dashboard' } as const;
  return [
    defineRoute({
      ...common,
      method: 'post',
      path: `${YIELD_BASE}/:id/domains`,
      summary: 'Attach a custom domain; publish its TXT record to verify it',
      params: z.object({ id: z.string().uuid() }),
      body: attachBody,
      responses: {
        201: { description: 'The pending domain', schema: domain },
        404: { description: 'Unknown deployment' },
        409: {
          description:
            'Hostname already verified by a deployment, already pending on one of yours, or too many pending domains',
        },
        503: {
          description:
            'The workflow engine did not accept the verification in time: nothing was attached; retry (Retry-After)',
        },
      },
      async handler({ merchantId, params, body }) {
        const deployment = await requireDeployment(app, merchantId, params.id);
        let row;
        try {
          row = await insertYieldDomain(
            app.db,
            {
              deploymentId: deployment.id,
              merchantId,
              hostname: body.hostname,
              verificationValue: newVerificationValue(),
            },
            { maxPending: app.config.YIELD_DOMAINS_PENDING_PER_MERCHANT },
          );
        } catch (error) {
          if (error instanceof HostnameTakenError || error instanceof PendingDomainsCapError)
            throw conflict(error.message);
          throw error;
        }
        // No workflow, no verification: a start Temporal does not accept in time removes the domain again
        // (the 503 tells the merchant to retry), so a domain is never left pending with nobody checking it.
        await withTemporalDeadline(app.temporal, app.config.TEMPORAL_START_TIMEOUT_MS, () =>
          startDomainVerificationWorkflow(app.temporal, {
            domainId: row.id,
            merchantId,
            createdAt: row.created_at,
            pollIntervalMs: app.config.YIELD_DOMAIN_POLL_MS,
            recheckIntervalMs: app.config.YIELD_DOMAIN_RECHECK_MS,
            lapseGraceMs: app.config.YIELD_DOMAIN_LAPSE_GRACE_MS,
            taskQueue: app.taskQueues.yield,
          }),
        ).catch(async (error: unknown) => {
          await deleteYieldDomain(app.db, { merchantId, deploymentId: deployment.id, domainId: row.id });
          throw error;
        });
        return { status: 201, body: toDomain(row) };
      },
    }),

    defineRoute({
      ...common,
      method: 'delete',
      path: `${YIELD_BASE}/:id/domains/:domainId`,
      summary: 'Remove a custom domain (its site stops answering at once)',
      params: z.object({ id: z.string().uuid(), domainId: z.string().uuid() }),
      responses: { 204: { description: 'Removed' }, 404: { description: 'Unknown deployment or domain' } },
      async handler({ merchantId, params }) {
        await requireDeployment(app, merchantId, params.id);
        const removed = await deleteYieldDomain(app.db, {
          merchantId,
          deploymentId: params.id,
          domainId: params.domainId,
        });
        if (!removed) throw notFound('Domain not found');
        return { status: 204 };
      },
    }),
  ];
}
