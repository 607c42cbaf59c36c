import { z } from 'zod';
import type { NetworkRegistry } from '../../../chain/networkRegistry';
import type { YieldContractSetRow, YieldDeploymentRow } from '../../../db/yieldDeployments';
import type { YieldDomainRow } from '../../../db/yieldDomains';
import { verificationRecordName } from '../../../yield/domainVerification';

/** Response models of the yield-deployment routes (docs/yield.md); rows never reach a response as they are. */

export const branding = z
  .object({
    displayName: z.string().trim().min(1, 'must not be empty').max(60).optional(),
    logoUrl: z
      .string()
      .max(2048)
      .url('must be an https URL')
      .refine((value) => value.startsWith('https://'), 'must be an https URL')
      .optional(),
    primaryColor: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb colour')
      .transform((value) => value.toLowerCase())
      .optional(),
    accentColor: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'must be a #rrggbb colour')
      .transform((value) => value.toLowerCase())
      .optional(),
  })
  .strict()
  .meta({ id: 'YieldBranding' });

const vault = z
  .object({
    symbol: z.string(),
    asset: z.string(),
    address: z.string(),
    name: z.string(),
    shareSymbol: z.string(),
  })
  .meta({ id: 'YieldVault' });

export const domain = z
  .object({
    id: z.string(),
    hostname: z.string(),
    status: z.enum(['pending', 'verified', 'failed']),
    verification: z.object({ type: z.literal('TXT'), name: z.string(), value: z.string() }),
    verifiedAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'YieldDomain' });

export const deployment = z
  .object({
    id: z.string(),
    name: z.string(),
    chainId: z.number(),
    network: z.string(),
    status: z.enum(['draft', 'deploying', 'active', 'failed', 'sunset']),
    tokens: z.array(z.string()),
    branding,
    contractSetId: z.string().nullable(),
    contracts: z.object({ vaults: z.array(vault) }).nullable(),
    domains: z.array(domain),
    failureReason: z.string().nullable(),
    siteUrl: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    sunsetAt: z.string().nullable(),
  })
  .meta({ id: 'YieldDeployment' });

export const contractSet = z
  .object({
    id: z.string(),
    chainId: z.number(),
    vaults: z.array(vault),
    deployedAt: z.string(),
    txHash: z.string(),
  })
  .meta({ id: 'YieldContractSet' });

export function toDomain(row: YieldDomainRow): z.infer<typeof domain> {
  return {
    id: row.id,
    hostname: row.hostname,
    status: row.status,
    verification: { type: 'TXT', name: verificationRecordName(row.hostname), value: row.verification_value },
    verifiedAt: row.verified_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}

export function toContractSet(row: YieldContractSetRow): z.infer<typeof contractSet> {
  return {
    id: row.id,
    chainId: row.chain_id,
    vaults: row.vaults,
    deployedAt: row.deployed_at.toISOString(),
    txHash: row.tx_hash,
  };
}

/**
 * The site of an active or sunset deployment: its first verified domain, else the preview path under
 * PUBLIC_BASE_URL. Other states have no site.
 */
function siteUrlOf(row: YieldDeploymentRow, domains: YieldDomainRow[], publicBaseUrl: string): string | null {
  if (row.status !== 'active' && row.status !== 'sunset') return null;
  const verified = domains.find((entry) => entry.status === 'verified');
  if (verified) return `https://${verified.hostname}/`;
  return `${publicBaseUrl.replace(/\/$/, '')}/sites/${row.id}`;
}

export function toDeployment(
  row: YieldDeploymentRow,
  {
    contractSet: set,
    domains,
    networks,
    publicBaseUrl,
  }: {
    contractSet: YieldContractSetRow | undefined;
    domains: YieldDomainRow[];
    networks: NetworkRegistry;
    publicBaseUrl: string;
  },
): z.infer<typeof deployment> {
  return {
    id: row.id,
    name: row.name,
    chainId: row.chain_id,
    network: networks.byChainId(row.chain_id)?.network ?? String(row.chain_id),
    status: row.status,
    tokens: row.tokens,
    branding: row.branding,
    contractSetId: row.contract_set_id,
    contracts: set ? { vaults: set.vaults } : null,
    domains: domains.map(toDomain),
    failureReason: row.failure_reason,
    siteUrl: siteUrlOf(row, domains, publicBaseUrl),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    sunsetAt: row.sunset_at?.toISOString() ?? null,
  };
}
