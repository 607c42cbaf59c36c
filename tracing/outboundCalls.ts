import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';

/**
 * A client span for an outbound HTTP call made with node:http (the webhook POST pins its DNS answer,
 * so it cannot go through the instrumented `fetch`), with the W3C `traceparent` added to its headers so
 * the receiver can join the trace. Only the OpenTelemetry API is imported here: until a process starts
 * tracing (tracing/tracing.ts) the tracer and the propagator are no-ops and the headers stay as they are.
 */
export async function tracedHttpCall<T extends { statusCode: number | null }>(
  { method, url, headers }: { method: string; url: string; headers: Record<string, string> },
  call: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  const tracer = trace.getTracer('stablepay');
  let origin = 'invalid-url';
  try {
    origin = new URL(url).origin;
  } catch {
    // The call itself reports the invalid URL.
  }
  // The origin only: a webhook path or query may carry the merchant's own tokens.
  return tracer.startActiveSpan(
    method,
    { kind: SpanKind.CLIENT, attributes: { 'http.request.method': method, 'server.address': origin } },
    async (span) => {
      const carried = { ...headers };
      propagation.inject(context.active(), carried);
      try {
        const result = await call(carried);
        if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
        if (result.statusCode === null || result.statusCode >= 400)
          span.setStatus({ code: SpanStatusCode.ERROR });
        return result;
      } finally {
        span.end();
      }
    },
  );
}
