import { get, patch } from '../../api';
import { Async, useLoad } from '../../components/async';
import { Section } from '../../components/bits';
import { Field, FormError, useForm } from '../../components/form';
import type { components } from '../../../../sdk/src/generated/openapi';

type LimitsView = components['schemas']['PaymasterLimitsView'];
/** The limits a merchant may tighten: the keys of the PATCH body, each with its label here. */
type LimitKey = keyof components['schemas']['PaymasterLimitsPatch'];

/** Every settable limit once (the type makes a missing or unknown key a compile error), in display order. */
const LIMIT_FIELDS: Record<LimitKey, { label: string; usd: boolean }> = {
  perTxUsd: { label: 'Per operation (USD)', usd: true },
  perSenderDailyUsd: { label: 'Per sender per day (USD)', usd: true },
  perSenderHourlyOps: { label: 'Operations per sender per hour', usd: false },
  perClientDailyUsd: { label: 'Per client per day (USD)', usd: true },
  perMerchantDailyUsd: { label: 'Per account per day (USD)', usd: true },
};
const LIMITS = (Object.keys(LIMIT_FIELDS) as LimitKey[]).map((key) => ({ key, ...LIMIT_FIELDS[key] }));

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
