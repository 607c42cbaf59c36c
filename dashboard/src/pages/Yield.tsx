import { useState } from 'preact/hooks';
import { get, post } from '../api';
import { Async, useLoad } from '../components/async';
import { Address, Chain, CopyButton, Section, StatusBadge, Time } from '../components/bits';
import { Field, FormError, useForm } from '../components/form';
import { YieldRedeemRequests } from '../components/yieldRedeemRequests';
import { KNOWN_CHAINS } from '../format';

interface Domain {
  id: string;
  hostname: string;
  status: string;
  verification: { type: 'TXT'; name: string; value: string };
  verifiedAt: string | null;
}

interface Deployment {
  id: string;
  name: string;
  chainId: number;
  status: string;
  tokens: string[];
  contracts: { vaults: { symbol: string; address: string; shareSymbol: string }[] } | null;
  domains: Domain[];
  failureReason: string | null;
  siteUrl: string | null;
  createdAt: string;
}

const BASE = '/v1/merchants/me/yield-deployments';

export function Yield() {
  const deployments = useLoad(() => get<{ data: Deployment[] }>(BASE));
  const form = useForm(
    async (data) => {
      await post(BASE, { name: String(data.get('name') ?? '').trim(), chainId: Number(data.get('chainId')) });
      (document.getElementById('yield-form') as HTMLFormElement | null)?.reset();
      deployments.reload();
    },
    ['name', 'chainId', 'tokens'],
  );
  return (
    <>
      <Section title="New yield deployment">
        <p class="muted">
          Your own branded vaults: deposits earn the sUSDe rate. A draft costs nothing until you deploy it.
        </p>
        <form id="yield-form" onSubmit={form.submit} noValidate>
          <Field label="Name" error={form.errorFor('name')}>
            {(props) => <input {...props} name="name" maxLength={100} />}
          </Field>
          <Field label="Chain" error={form.errorFor('chainId')}>
            {(props) => (
              <select {...props} name="chainId">
                {KNOWN_CHAINS.map((chain) => (
                  <option key={chain.id} value={chain.id}>
                    {chain.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <FormError form={form} />
          <button type="submit" class="primary" disabled={form.busy}>
            Create draft
          </button>
        </form>
      </Section>
      <Async
        state={deployments}
        isEmpty={(result) => result.data.length === 0}
        empty="No yield deployments yet."
      >
        {(result) => (
          <>
            {result.data.map((deployment) => (
              <DeploymentCard key={deployment.id} deployment={deployment} onChange={deployments.reload} />
            ))}
          </>
        )}
      </Async>
    </>
  );
}

function DeploymentCard({ deployment, onChange }: { deployment: Deployment; onChange: () => void }) {
  const [error, setError] = useState<string>();
  const deploy = async () => {
    setError(undefined);
    try {
      await post(`${BASE}/${deployment.id}/deploy`);
      onChange();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  const domain = useForm(
    async (data) => {
      await post(`${BASE}/${deployment.id}/domains`, { hostname: String(data.get('hostname') ?? '').trim() });
      onChange();
    },
    ['hostname'],
  );
  return (
    <Section title={deployment.name} actions={<StatusBadge status={deployment.status} />}>
      <p class="muted">
        <Chain id={deployment.chainId} /> · {deployment.tokens.join(', ')} · created{' '}
        <Time iso={deployment.createdAt} />
      </p>
      {deployment.failureReason && <p class="field-error">{deployment.failureReason}</p>}
      {deployment.siteUrl && (
        <p>
          Site: <a href={deployment.siteUrl}>{deployment.siteUrl}</a>
        </p>
      )}
      {deployment.contracts && (
        <ul class="plain">
          {deployment.contracts.vaults.map((vault) => (
            <li key={vault.address}>
              {vault.symbol} vault ({vault.shareSymbol}) <Address value={vault.address} />
            </li>
          ))}
        </ul>
      )}
      {deployment.contracts && <YieldRedeemRequests deploymentId={deployment.id} />}
      {(deployment.status === 'draft' || deployment.status === 'failed') && (
        <div class="actions">
          <button type="button" onClick={deploy}>
            Deploy
          </button>
        </div>
      )}
      {error && (
        <p class="field-error" role="alert">
          {error}
        </p>
      )}
      <h3>Custom domains</h3>
      {deployment.domains.length === 0 && <p class="muted">No domain yet.</p>}
      {deployment.domains.map((entry) => (
        <div key={entry.id} class="domain" data-testid="domain">
          <p>
            <strong>{entry.hostname}</strong> <StatusBadge status={entry.status} />
          </p>
          {entry.status !== 'verified' && (
            <dl class="facts">
              <dt>Record type</dt>
              <dd>TXT</dd>
              <dt>Name</dt>
              <dd>
                <code>{entry.verification.name}</code> <CopyButton text={entry.verification.name} />
              </dd>
              <dt>Value</dt>
              <dd>
                <code data-testid="txt-value">{entry.verification.value}</code>{' '}
                <CopyButton text={entry.verification.value} />
              </dd>
            </dl>
          )}
        </div>
      ))}
      <form onSubmit={domain.submit} noValidate>
        <Field label="Add a domain" hint="e.g. earn.yourshop.com" error={domain.errorFor('hostname')}>
          {(props) => <input {...props} name="hostname" />}
        </Field>
        <FormError form={domain} />
        <button type="submit" disabled={domain.busy}>
          Add domain
        </button>
      </form>
    </Section>
  );
}
