import { z } from 'zod';
import type { YieldDeploymentStatus } from '../../../../db/schema';
import {
  findContractSets,
  findYieldDeployment,
  type YieldDeploymentRow,
} from '../../../../db/yieldDeployments';
import { listYieldDomains } from '../../../../db/yieldDomains';
import { yieldNetworkOf, type YieldNetwork } from '../../../../yield/deployOptions';
import type { AppContext } from '../../../appContext';
import { conflict, invalidField, notFound } from '../../../httpErrors';
import { toDeployment } from '../yieldModels';

/** What every yield-deployment handler shares: the base path, the id, the lookups, the answers. */

export const YIELD_BASE = '/v1/merchants/me/yield-deployments';

/** Every yield-deployment route is the dashboard's, signed in (JWT). */
export const DEPLOYMENT_ROUTE = { auth: 'jwt', tag: 'Yield deployments', audience: 'dashboard' } as const;

export const idParams = z.object({ id: z.string().uuid() });

export const yieldDeploymentNotFound = () => notFound('Yield deployment not found');

/** 409: the deployment is not in a state the action needs. */
export function wrongState(row: YieldDeploymentRow, action: string, allowed: YieldDeploymentStatus[]) {
  return conflict(`Yield deployment is ${row.status}; ${action} needs ${allowed.join(' or ')}`);
}

/** The chain's yield facts, or a 400 naming the chain (unknown, or no vault factory there). */
export function requireYieldNetwork(app: AppContext, chainId: number): YieldNetwork {
  const found = yieldNetworkOf(app.networks.byChainId(chainId));
  if (!found) throw invalidField('chainId', `${chainId} has no yield vault deployment`);
  return found;
}

/** The merchant's deployment, or 404. */
export async function requireDeployment(app: AppContext, merchantId: string, id: string) {
  const row = await findYieldDeployment(app.db, merchantId, id);
  if (!row) throw yieldDeploymentNotFound();
  return row;
}

/** The response body of deployments, with their contract sets and domains. */
export async function presentDeployments(app: AppContext, rows: YieldDeploymentRow[]) {
  const setIds = rows.flatMap((row) => (row.contract_set_id ? [row.contract_set_id] : []));
  const [sets, domains] = await Promise.all([
    findContractSets(app.db, setIds),
    listYieldDomains(
      app.db,
      rows.map((row) => row.id),
    ),
  ]);
  return rows.map((row) =>
    toDeployment(row, {
      contractSet: sets.find((set) => set.id === row.contract_set_id),
      domains: domains.filter((entry) => entry.deployment_id === row.id),
      networks: app.networks,
      publicBaseUrl: app.config.PUBLIC_BASE_URL,
    }),
  );
}

export async function present(app: AppContext, row: YieldDeploymentRow) {
  return (await presentDeployments(app, [row]))[0]!;
}
