import { get, patch } from '../../api';
import { Async, useLoad } from '../../components/async';
import { Section } from '../../components/bits';
import { Field, FormError, useForm } from '../../components/form';

type LimitKey =
  'perSenderHourlyOps' | 'perSenderDailyUsd' | 'perTxUsd' | 'perMerchantDailyUsd' | 'perClientDailyUsd';
type LimitsView = Record<LimitKey, string | number | null>;

const LIMITS: { key: LimitKey; label: string; usd: boolean }[] = [
  { key: 'perTxUsd', label: 'Per operation (USD)', usd: true },
  { key: 'perSenderDailyUsd', label: 'Per sender per day (USD)', usd: true },
  { key: 'perSenderHourlyOps', label: 'Operations per sender per hour', usd: false },
  { key: 'perClientDailyUsd', label: 'Per client per day (USD)', usd: true },
  { key: 'perMerchantDailyUsd', label: 'Per account per day (USD)', usd: true },
];

/** Your own limits may only tighten the platform's; an empty field clears yours. */
export function Limits() {
  const limits = useLoad(() =>
    get<{ platform: LimitsView; merchant: LimitsView; effective: LimitsView }>('/v1/paymaster/limits'),
  );
  const form = useForm(
    async (data) => {
      const body: Record<string, string | number | null> = {};
      for (const limit of LIMITS) {
        const text = String(data.get(limit.key) ?? '').trim();
        const before = limits.data?.merchant[limit.key];
        const value = text === '' ? null : limit.usd ? text : /^\d+$/.test(text) ? Number(text) : text;
        if (String(value ?? '') !== String(before ?? '')) body[limit.key] = value;
      }
      if (Object.keys(body).length === 0) return;
      await patch('/v1/paymaster/limits', body);
      limits.reload();
    },
    LIMITS.map((limit) => limit.key),
  );
  return (
    <Section title="Limits">
      <Async state={limits}>
        {(result) => (
          <form onSubmit={form.submit} noValidate>
            {LIMITS.map((limit) => (
              <Field
                key={limit.key}
                label={limit.label}
                hint={`Platform: ${result.platform[limit.key] ?? 'none'} · in force: ${result.effective[limit.key] ?? 'none'}`}
                error={form.errorFor(limit.key)}
              >
                {(props) => (
                  <input
                    {...props}
                    name={limit.key}
                    inputMode="decimal"
                    defaultValue={String(result.merchant[limit.key] ?? '')}
                  />
                )}
              </Field>
            ))}
            <FormError form={form} />
            <button type="submit" disabled={form.busy}>
              Save limits
            </button>
          </form>
        )}
      </Async>
    </Section>
  );
}
