import type { AppContext } from '../../../appContext';
import type { AnyRoute } from '../../../routing/route';
import { yieldCatalogRoutes } from './catalog';
import { yieldContractLinkRoutes } from './contractLink';
import { yieldDeployRoutes } from './deploy';
import { yieldDraftRoutes } from './drafts';
import { yieldSunsetRoutes } from './sunset';

/**
 * SPEC's yield-deployment table (JWT), base /v1/merchants/me/yield-deployments, with docs/yield.md shapes:
 *
 * | GET    | /deploy-options   | network's vault factory and permitted tokens           | 200 |
 * | GET    | /contract-sets    | merchant's deployed contract sets on a network         | 200 |
 * | GET    | (collection)      | list deployments                                       | 200 |
 * | POST   | (collection)      | create a draft                                         | 201 |
 * | GET    | /{id}             | get one                                                | 200 |
 * | PATCH  | /{id}             | update name or branding                                | 200 |
 * | DELETE | /{id}             | delete a draft                                         | 204 |
 * | POST   | /{id}/contracts   | link an existing contract set: draft → active          | 200 |
 * | POST   | /{id}/deploy      | queue the vault deployment: draft | failed → deploying | 202 |
 * | POST   | /{id}/sunset      | active → sunset                                        | 200 |
 * | DELETE | /{id}/sunset      | sunset → active                                        | 200 |
 * (domains: ./domains.ts)
 *
 * A foreign or unknown id answers 404; a transition from the wrong state 409.
 */
export function yieldDeploymentRoutes(app: AppContext): AnyRoute[] {
  return [
    ...yieldCatalogRoutes(app), // deploy-options, contract-sets
    ...yieldDraftRoutes(app), // the collection and /{id}
    ...yieldContractLinkRoutes(app), // /{id}/contracts
    ...yieldDeployRoutes(app), // /{id}/deploy
    ...yieldSunsetRoutes(app), // /{id}/sunset
  ];
}
