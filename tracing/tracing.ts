import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import {
  OpenTelemetryPlugin,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetryPluginOptions,
} from '@temporalio/interceptors-opentelemetry';
import type { Middleware } from 'koa';

/**
 * OpenTelemetry traces from an api request through the Temporal client (StartWorkflow), the workflow
 * (RunWorkflow) and its activities (RunActivity) to the outbound HTTP calls they make (webhooks, RPC,
 * the signer: every `fetch`), one trace id end to end, exported by OTLP/HTTP. Only a process whose
 * OTEL_EXPORTER_OTLP_ENDPOINT is set calls `startTracing`; otherwise nothing here is loaded into the
 * request path: no provider, no interceptor, no instrumentation.
 */
export interface Tracing {
  /** For the process's Temporal clients: starts and signals carry the current span to the workflow. */
  workflowClientInterceptors: WorkflowClientInterceptor[];
  /** For `Worker.create`: activity and workflow interceptors, and the sink that exports workflow spans. */
  workerPlugin: OpenTelemetryPlugin;
  /** Workflow interceptor modules to bundle with the workflows (the plugin's are ignored for a prebuilt bundle). */
  workflowInterceptorModules: string[];
  /** A server span per api request (`POST /v1/sessions`), the parent of whatever the request does. */
  requestSpans(): Middleware;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

export function startTracing({
  endpoint,
  serviceName,
  exportDelayMs = 2_000,
}: {
  endpoint: string;
  serviceName: string;
  /** How long spans wait in the batch before export. */
  exportDelayMs?: number;
}): Tracing {
  const resource = new Resource({ 'service.name': serviceName });
  const spanProcessor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }),
    { scheduledDelayMillis: exportDelayMs },
  );
  const provider = new NodeTracerProvider({ resource });
  provider.addSpanProcessor(spanProcessor);
  // Global: AsyncLocalStorage context and W3C trace-context propagation (traceparent) for the process.
  provider.register();
  const stopInstrumenting = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new UndiciInstrumentation({
        // RPC provider URLs carry API keys in their path or query: spans name the origin only.
        startSpanHook: (request) => ({
          'url.full': request.origin,
          'url.path': '[redacted]',
          'url.query': '',
        }),
      }),
    ],
  });
  const tracer = provider.getTracer('stablepay');
  return {
    workflowClientInterceptors: [new OpenTelemetryWorkflowClientInterceptor({ tracer })],
    // The plugin is typed against a newer sdk-trace-base than the exporter's; it only calls onEnd/onStart.
    workerPlugin: new OpenTelemetryPlugin({
      resource,
      spanProcessor: spanProcessor as unknown as OpenTelemetryPluginOptions['spanProcessor'],
      tracer,
    }),
    workflowInterceptorModules: [
      require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
    ],
    requestSpans: () => async (ctx, next) => {
      const parent = propagation.extract(context.active(), ctx.headers);
      await tracer.startActiveSpan(
        ctx.method,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method } },
        parent,
        async (span) => {
          try {
            await next();
          } finally {
            // The route pattern, never the raw path: ids stay out of span names.
            const route = ctx._matchedRoute ? String(ctx._matchedRoute) : undefined;
            if (route) span.updateName(`${ctx.method} ${route}`);
            span.setAttributes({
              'http.route': route ?? 'unmatched',
              'http.response.status_code': ctx.status,
            });
            if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
            span.end();
          }
        },
      );
    },
    async shutdown() {
      stopInstrumenting();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
