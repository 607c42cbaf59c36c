import { z } from 'zod';
import { STABLECOIN_SYMBOLS } from '../../chain/stablecoins';
import { SESSION_STATUSES } from '../../db/sessionStatus';
import { type AnyToolDefinition, routeTool, segment } from '../toolDefinition';
import { PAGE_SIZES, pageSizeText } from '../../config/pageSizes';

/**
 * | create_session | POST /v1/merchants/me/sessions      |
 * | get_session    | GET  /v1/merchants/me/sessions/{id} |
 * | list_sessions  | GET  /v1/merchants/me/sessions      |
 */
const lineItem = z.object({
  name: z.string(),
  quantity: z.number().int(),
  unitPrice: z.string().describe('decimal USD'),
  total: z.string().describe('decimal USD, quantity × unitPrice'),
});

export const sessionTools: AnyToolDefinition[] = [
  routeTool({
    name: 'create_session',
    description:
      'Create a payment session (an invoice) and get its paymentUrl for the customer. sandboxMode true uses testnets.',
    inputSchema: {
      amount: z.string().describe('decimal USD, e.g. "25.00"'),
      merchantName: z.string().optional(),
      lineItems: z.array(lineItem).optional(),
      paymentOptionSymbols: z.array(z.enum(STABLECOIN_SYMBOLS)).optional(),
      expiresInSec: z.number().int().optional().describe('60 to 604800; default 3600'),
      successUrl: z.string().optional().describe('absolute https URL the checkout returns to'),
      sandboxMode: z.boolean().optional(),
      refundAddress: z
        .string()
        .optional()
        .describe('0x address refunds of the session go to when they name none (as the customer gave it)'),
      overpayment: z
        .enum(['settle', 'hold'])
        .optional()
        .describe(
          'money paid above amount: "settle" (default) sweeps it with the rest; "hold" keeps it in the deposit address for a refund',
        ),
    },
    auth: 'jwt',
    method: 'POST',
    path: '/v1/merchants/me/sessions',
    body: (input) => input,
  }),

  routeTool({
    name: 'get_session',
    description: 'Read one of the merchant’s payment sessions.',
    inputSchema: { id: z.string().describe('session id (UUID)') },
    auth: 'jwt',
    method: 'GET',
    path: ({ id }) => `/v1/merchants/me/sessions/${segment(id)}`,
  }),

  routeTool({
    name: 'list_sessions',
    description: 'List the merchant’s payment sessions, newest first, a page at a time.',
    inputSchema: {
      limit: z.number().int().optional().describe(pageSizeText(PAGE_SIZES.standard)),
      page: z.number().int().optional().describe('from 1'),
      status: z.enum(SESSION_STATUSES).optional(),
    },
    auth: 'jwt',
    method: 'GET',
    path: '/v1/merchants/me/sessions',
    query: (input) => input,
  }),
];
