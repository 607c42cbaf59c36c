import { useState } from 'preact/hooks';
import { ApiError, post } from '../../api';
import { Field, FormError, useForm } from '../../components/form';

/** What `POST /v1/paymaster/clients/{id}/policies/dry-run` answers. */
interface DryRunResult {
  wouldSponsor: { policyId: string; name: string } | null;
  refusal: string | null;
  policies: {
    policyId: string;
    name: string;
    sponsors: boolean;
    reason: string | null;
    asksApproval: boolean;
  }[];
}

/** EntryPoint v0.7, what most wallets use. */
const ENTRY_POINT_V07 = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';

/**
 * "Would this be sponsored?": a user operation pasted as JSON, checked against every policy of the client
 * now (the dry run: nothing consumed or recorded); which policy would sponsor it, or why none would.
 */
export function PolicyDryRun({ clientId }: { clientId: string }) {
  const [result, setResult] = useState<DryRunResult>();
  const form = useForm(
    async (data) => {
      setResult(undefined);
      const text = (name: string) => String(data.get(name) ?? '').trim();
      let userOperation: unknown;
      try {
        userOperation = JSON.parse(text('userOperation'));
      } catch {
        throw new ApiError(400, 'Validation failed: userOperation: is not JSON', undefined, [
          { field: 'userOperation', message: 'is not JSON' },
        ]);
      }
      setResult(
        await post<DryRunResult>(`/v1/paymaster/clients/${clientId}/policies/dry-run`, {
          userOperation,
          entryPoint: text('entryPoint'),
          chainId: Number(text('chainId')),
        }),
      );
    },
    ['userOperation', 'entryPoint', 'chainId'],
  );
  const userOperationError = form.errorFor('userOperation');
  return (
    <form onSubmit={form.submit} noValidate aria-label="Would this be sponsored?">
      <h3>Would this be sponsored?</h3>
      <Field
        label="User operation (JSON)"
        hint="As your wallet sends it to pm_getPaymasterData; nothing is signed, spent or recorded"
        error={userOperationError}
      >
        {(props) => <textarea {...props} name="userOperation" rows={6} required />}
      </Field>
      <Field label="Entry point" error={form.errorFor('entryPoint')}>
        {(props) => <input {...props} name="entryPoint" defaultValue={ENTRY_POINT_V07} />}
      </Field>
      <Field label="Chain id" error={form.errorFor('chainId')}>
        {(props) => <input {...props} name="chainId" inputMode="numeric" defaultValue="84532" />}
      </Field>
      <FormError form={form} />
      <button type="submit" disabled={form.busy}>
        Check
      </button>
      {result && (
        <div role="status">
          <p>
            {result.wouldSponsor ? (
              <>
                Sponsored by <strong>{result.wouldSponsor.name}</strong>
              </>
            ) : (
              <>Not sponsored{result.refusal && <>: {result.refusal}</>}</>
            )}
          </p>
          <ul>
            {result.policies.map((policy) => (
              <li key={policy.policyId}>
                {policy.name}: {policy.sponsors ? 'would sponsor' : `would not (${policy.reason})`}
                {policy.asksApproval && ' · asks its approval webhook when signing'}
              </li>
            ))}
          </ul>
        </div>
      )}
    </form>
  );
}
