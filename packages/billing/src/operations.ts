// The billing domain: payments, subscription and quota. Read-only, so its two tools split by
// shape: billing_list (histories) and billing_get (single records).
import { z } from 'zod';
import { defineReadOnlyDomain, pathId } from '@engage-mcp/shared';

export const billing = defineReadOnlyDomain(
  'billing',
  'Billing and quota',
  [
    {
      id: 'billing.payment.list',
      method: 'GET',
      path: '/api/payment/v1/payment/history',
      scope: 'billing.read',
      risk: 'safe',
      summary: 'Payment transaction history.',
      params: z.strictObject({}),
      list: {},
    },
    {
      id: 'billing.usage',
      method: 'GET',
      path: '/api/ai/v1/usage',
      scope: 'quota.read',
      risk: 'safe',
      summary: 'Quota usage history.',
      params: z.strictObject({}),
      list: {},
    },
    {
      id: 'billing.payment.get',
      method: 'GET',
      path: '/api/payment/v1/payment/history/{orderID}',
      scope: 'billing.read',
      risk: 'safe',
      summary: 'One transaction.',
      params: z.strictObject({ orderID: pathId('orderID (billing.payment.list)') }),
      findIdsWith: 'billing.payment.list (billing_list)',
    },
    {
      id: 'billing.subscription',
      method: 'GET',
      path: '/api/user/v1/dashboard/subscription',
      scope: 'billing.read',
      risk: 'safe',
      summary: 'The active subscription plan.',
      params: z.strictObject({}),
    },
    {
      id: 'billing.quota',
      method: 'GET',
      path: '/api/ai/v1/quota',
      scope: 'quota.read',
      risk: 'safe',
      summary: 'Remaining AI and message quota.',
      params: z.strictObject({}),
    },
  ],
  {
    billing_list: { title: 'Billing: histories', operationIds: ['billing.payment.list', 'billing.usage'] },
    billing_get: { title: 'Billing: records', operationIds: ['billing.payment.get', 'billing.subscription', 'billing.quota'] },
  },
);
