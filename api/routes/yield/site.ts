import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { z } from 'zod';
import {
  findContractSets,
  findYieldDeploymentById,
  type YieldDeploymentRow,
} from '../../../db/yieldDeployments';
import { findDeploymentByVerifiedHostname } from '../../../db/yieldDomains';
import { buildYieldSiteView, createVaultFigureReader } from '../../../yield/siteView';
import { renderYieldSite, renderYieldSiteNotFound } from '../../../web/yield/renderYieldSite';
import { setStrictPageHeaders } from '../../../web/strictPageHeaders';
import type { AppContext } from '../../appContext';
import { customHostnameReader } from '../../customDomainHosts';
import { defineRoute, type AnyRoute } from '../../routing/route';

/**
 * | GET | /               | none | 200 text/html: the site of the active or sunset deployment whose verified domain is the Host |
 * | GET | /sites/{id}     | none | 200 text/html: the same site by deployment id (preview)                                        |
 *
 * Anything else — an unknown host or id, a domain not (or no longer) verified, a deployment in another
 * state — answers the HTML 404 page. Domains are looked up per request, so removing one stops its site at once.
 */

const deploymentId = z.string().uuid();

export function yieldSiteRoutes(app: AppContext): AnyRoute[] {
  // The sites, on a custom domain's Host and as previews, are public reads (security review II, finding 7).
  const common = {
    auth: 'none',
    perIpLimit: 'publicSession',
    tag: 'Yield sites',
    audience: 'dashboard',
  } as const;
  const responses = {
    200: { description: 'The branded yield site', contentType: 'text/html', schema: z.string() },
    404: { description: 'No site here (HTML page)', contentType: 'text/html', schema: z.string() },
  };

  const readFigures = createVaultFigureReader({ publicClients: app.publicClients });
  // The Host read as the custom-domain guard reads it (security review III, finding 5).
  const customHostnameOf = customHostnameReader(app.config.PUBLIC_BASE_URL);

  const serve = async (ctx: Context, deployment: YieldDeploymentRow | undefined) => {
    const nonce = randomBytes(16).toString('base64');
    setStrictPageHeaders(ctx, nonce);
    ctx.type = 'html';
    const live = deployment && (deployment.status === 'active' || deployment.status === 'sunset');
    const [contractSet] =
      live && deployment.contract_set_id ? await findContractSets(app.db, [deployment.contract_set_id]) : [];
    if (!live || !contractSet) {
      ctx.status = 404;
      ctx.body = renderYieldSiteNotFound({ nonce });
      return;
    }
    const view = await buildYieldSiteView({
      deployment,
      contractSet,
      networks: app.networks,
      readFigures,
    });
    ctx.status = 200;
    ctx.body = renderYieldSite({ view, nonce });
  };

  return [
    defineRoute({
      ...common,
      method: 'get',
      path: '/',
      summary: "A yield deployment's site, on its verified custom domain (the Host header)",
      responses,
      async handler({ ctx }) {
        const hostname = customHostnameOf(ctx.host);
        await serve(ctx, hostname ? await findDeploymentByVerifiedHostname(app.db, hostname) : undefined);
      },
    }),
    defineRoute({
      ...common,
      method: 'get',
      path: '/sites/:id',
      summary: "Preview of a yield deployment's site by id",
      responses,
      // Checked here rather than by a params schema: a bad link answers the HTML 404 page, not JSON.
      async handler({ ctx }) {
        const id = String(ctx.params.id);
        await serve(
          ctx,
          deploymentId.safeParse(id).success ? await findYieldDeploymentById(app.db, id) : undefined,
        );
      },
    }),
  ];
}
