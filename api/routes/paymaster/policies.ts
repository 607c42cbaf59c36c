import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { PolicyApprovalWebhook } from '../../../db/schema';
import { approvalSecretBinding } from '../../../paymaster/policy/approvalWebhook';
import { generateWebhookSecret } from '../../../webhooks/webhookSecrets';
import {
  deleteSponsorshipPolicy,
  findMerchantClient,
  findSponsorshipPolicy,
  insertSponsorshipPolicy,
  listSponsorshipPolicies,
  MAX_POLICIES_PER_CLIENT,
  reorderSponsorshipPolicies,
  updateSponsorshipPolicy,
  type SponsorshipPolicyFields,
} from '../../../db/paymasterSponsorshipPolicies';
import type { AppContext } from '../../appContext';
import { conflict, invalidField, notFound } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { idParams } from './fields';
import { paymasterPolicyDryRunRoutes } from './policyDryRun';
import {
  checkPolicyRules,
  createPolicyBody,
  policyFieldsOf,
  policyModel,
  policyParams,
  reorderPoliciesBody,
  toPolicyModel,
  updatePolicyBody,
} from './policyModels';

/**
 * A paymaster client's sponsorship policies (docs/paymaster.md "Sponsorship policies (issue 43)"), base `/v1/paymaster/clients/{id}/policies`:
 * | GET    | (collection)  | 200 `{ data }` in order |
 * | POST   | (collection)  | 201 policy, appended last |
 * | GET    | /{policyId}   | 200 policy |
 * | PATCH  | /{policyId}   | 200 policy; the position changes only through the order |
 * | DELETE | /{policyId}   | 204; the ones after it move up |
 * | PUT    | /order        | `{ policyIds }` naming each policy once → 200 `{ data }` in the new order |
 * A revoked, unknown or other merchant's client, or a policy of another client, answers 404.
 */

const clientNotFound = () => notFound('Paymaster client not found');
const policyNotFound = () => notFound('Paymaster policy not found');
const listSchema = z.object({ data: z.array(policyModel) });

const common = { auth: 'jwt', tag: 'Paymaster policies', audience: 'dashboard' } as const;
const base = '/v1/paymaster/clients/:id/policies';

/**
 * An approval webhook as stored, with its signing secret sealed to the policy: the stored one kept when
 * the policy already has one, a new one otherwise (`secret`: what the answer shows, once).
 */
function sealedApprovalWebhook(
  app: AppContext,
  policyId: string,
  webhook: Omit<PolicyApprovalWebhook, 'secretCiphertext'>,
  stored: PolicyApprovalWebhook | null,
): { webhook: PolicyApprovalWebhook; secret?: string } {
  if (stored?.secretCiphertext) return { webhook: { ...webhook, secretCiphertext: stored.secretCiphertext } };
  const secret = generateWebhookSecret();
  return {
    webhook: {
      ...webhook,
      secretCiphertext: app.webhookSecrets.seal(secret, approvalSecretBinding(policyId)),
    },
    secret,
  };
}

/** What every policy route needs: the merchant's active client (404 otherwise) and the URL rules. */
function policyRouteContext(app: AppContext) {
  return {
    urlPolicy: { allowPrivateTargets: app.config.WEBHOOK_ALLOW_PRIVATE_TARGETS },
    clientOf: async (merchantId: string, id: string) => {
      const client = await findMerchantClient(app.db, merchantId, id);
      if (!client) throw clientNotFound();
      return client;
    },
  };
}

export function paymasterPolicyRoutes(app: AppContext): AnyRoute[] {
  return [...policyCollectionRoutes(app), ...paymasterPolicyDryRunRoutes(app), ...policyItemRoutes(app)];
}

/** The list, create and order routes. */
function policyCollectionRoutes(app: AppContext): AnyRoute[] {
  const { urlPolicy, clientOf } = policyRouteContext(app);
  return [
    defineRoute({
      ...common,
      method: 'get',
      path: base,
      summary: "List a client's sponsorship policies in the order they are tried",
      params: idParams,
      responses: {
        200: { description: 'Policies', schema: listSchema },
        404: { description: 'Unknown client' },
      },
      async handler({ merchantId, params }) {
        const client = await clientOf(merchantId, params.id);
        const policies = await listSponsorshipPolicies(app.db, client.id);
        return { status: 200, body: { data: policies.map((row) => toPolicyModel(row)) } };
      },
    }),

    defineRoute({
      ...common,
      method: 'post',
      path: base,
      summary: 'Add a sponsorship policy after the last one',
      params: idParams,
      body: createPolicyBody,
      responses: {
        201: { description: 'Created policy', schema: policyModel },
        400: { description: 'Invalid field (named in errors); nothing saved' },
        404: { description: 'Unknown client' },
        409: { description: `The client already has ${MAX_POLICIES_PER_CLIENT} policies` },
      },
      async handler({ merchantId, params, body }) {
        const client = await clientOf(merchantId, params.id);
        checkPolicyRules(body, { now: app.now(), clientChainIds: client.allowed_chain_ids, urlPolicy });
        const id = randomUUID();
        const approval = body.approvalWebhook
          ? sealedApprovalWebhook(app, id, body.approvalWebhook, null)
          : undefined;
        const created = await insertSponsorshipPolicy(app.db, {
          id,
          merchantId,
          clientId: client.id,
          fields: {
            ...(policyFieldsOf(body) as SponsorshipPolicyFields),
            ...(approval && { approvalWebhook: approval.webhook }),
          },
        });
        app.paymasterConfigs.invalidate(merchantId);
        if (!created.ok && created.reason === 'client_not_found') throw clientNotFound();
        if (!created.ok) throw conflict(`A client holds at most ${MAX_POLICIES_PER_CLIENT} policies`);
        return { status: 201, body: toPolicyModel(created.policy, approval?.secret) };
      },
    }),

    defineRoute({
      ...common,
      method: 'put',
      path: `${base}/order`,
      summary: "Set the order of a client's policies (every policy named once; the first is tried first)",
      params: idParams,
      body: reorderPoliciesBody,
      responses: {
        200: { description: 'Policies in the new order', schema: listSchema },
        400: { description: 'policyIds does not name each of the client’s policies exactly once' },
        404: { description: 'Unknown client' },
      },
      async handler({ merchantId, params, body }) {
        const client = await clientOf(merchantId, params.id);
        const reordered = await reorderSponsorshipPolicies(app.db, {
          merchantId,
          clientId: client.id,
          policyIds: body.policyIds,
        });
        app.paymasterConfigs.invalidate(merchantId);
        if (!reordered.ok && reordered.reason === 'client_not_found') throw clientNotFound();
        if (!reordered.ok)
          throw invalidField('policyIds', "must name each of the client's policies exactly once");
        return { status: 200, body: { data: reordered.policies.map((row) => toPolicyModel(row)) } };
      },
    }),
  ];
}

/** The read, update and delete routes of one policy. */
function policyItemRoutes(app: AppContext): AnyRoute[] {
  const { urlPolicy, clientOf } = policyRouteContext(app);
  return [
    defineRoute({
      ...common,
      method: 'get',
      path: `${base}/:policyId`,
      summary: 'Read a sponsorship policy',
      params: policyParams,
      responses: {
        200: { description: 'Policy', schema: policyModel },
        404: { description: 'Unknown policy' },
      },
      async handler({ merchantId, params }) {
        const client = await clientOf(merchantId, params.id);
        const policy = await findSponsorshipPolicy(app.db, client.id, params.policyId);
        if (!policy) throw policyNotFound();
        return { status: 200, body: toPolicyModel(policy) };
      },
    }),

    defineRoute({
      ...common,
      method: 'patch',
      path: `${base}/:policyId`,
      summary: "Change a policy's name, chains, allowlist, window, budgets or approval webhook",
      params: policyParams,
      body: updatePolicyBody,
      responses: {
        200: { description: 'Updated policy', schema: policyModel },
        400: { description: 'Invalid field (named in errors); nothing saved' },
        404: { description: 'Unknown policy' },
      },
      async handler({ merchantId, params, body }) {
        const client = await clientOf(merchantId, params.id);
        const stored = await findSponsorshipPolicy(app.db, client.id, params.policyId);
        if (!stored) throw policyNotFound();
        checkPolicyRules(body, {
          stored: { startsAt: stored.starts_at, endsAt: stored.ends_at },
          now: app.now(),
          clientChainIds: client.allowed_chain_ids,
          urlPolicy,
        });
        const approval = body.approvalWebhook
          ? sealedApprovalWebhook(app, stored.id, body.approvalWebhook, stored.approval_webhook)
          : undefined;
        const updated = await updateSponsorshipPolicy(app.db, {
          clientId: client.id,
          policyId: params.policyId,
          fields: { ...policyFieldsOf(body), ...(approval && { approvalWebhook: approval.webhook }) },
        });
        app.paymasterConfigs.invalidate(merchantId);
        if (!updated) throw policyNotFound();
        if (updated === 'window_ends_before_start')
          throw invalidField(
            'endsAt',
            'must be after startsAt (the policy changed meanwhile: read it again)',
          );
        return { status: 200, body: toPolicyModel(updated, approval?.secret) };
      },
    }),

    defineRoute({
      ...common,
      method: 'delete',
      path: `${base}/:policyId`,
      summary: 'Delete a policy; the ones after it move up (a client without policies sponsors nothing)',
      params: policyParams,
      responses: { 204: { description: 'Deleted' }, 404: { description: 'Unknown policy' } },
      async handler({ merchantId, params }) {
        const client = await clientOf(merchantId, params.id);
        const deleted = await deleteSponsorshipPolicy(app.db, {
          merchantId,
          clientId: client.id,
          policyId: params.policyId,
        });
        app.paymasterConfigs.invalidate(merchantId);
        if (!deleted) throw policyNotFound();
        return { status: 204 };
      },
    }),
  ];
}
