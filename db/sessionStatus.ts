/**
 * The statuses of a payment session (SPEC: Session status), defined once: the schema type, the API's
 * zod enum and the workflow's state derive from this list. The CHECK constraint of migration
 * 2026_11_22_002 spells the same list out, as migrations are frozen history. Pure declarations, safe
 * to import from workflow code.
 */
export const SESSION_STATUSES = [
  'pending',
  'awaiting_payment',
  'confirming',
  'bridging',
  'completed',
  'failed',
  'expired',
] as const;

export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** The statuses a session's workflow moves through (`pending` is before its workflow exists). */
export type WorkflowSessionStatus = Exclude<SessionStatus, 'pending'>;
