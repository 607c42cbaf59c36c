/**
 * The statuses of a webhook delivery, defined once: the schema type, the API's and the tool server's zod
 * enums derive from this list (the tool server sits beside the api, not above it: docs/architecture.md
 * "Layers"). Pure declarations.
 */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;

export type WebhookDeliveryStatus = (typeof DELIVERY_STATUSES)[number];
