// Billing and tenant: payments, subscription, AI and message quota, usage, the company's settings,
// and the tenants a key's holder belongs to. All read-only.
import { find, quotaLeft, route, type HandlerContext } from './route.js';

function quota({ tenant }: HandlerContext) {
  return {
    aiQuota: { ...tenant.aiQuota, remaining: tenant.aiQuota.total - tenant.aiQuota.used },
    messageQuota: { ...tenant.messageQuota, remaining: quotaLeft(tenant) },
  };
}

/** Tenant A's holder is also an agent of tenant B; tenant B's holder sees only B. */
function tenantList({ tenant, sandbox }: HandlerContext) {
  const { A, B } = sandbox.tenants;
  return [A, B]
    .filter((item) => item === tenant || tenant === A)
    .map((item) => ({ tenantId: item.tenantId, name: item.name, role: item === tenant ? 'owner' : 'agent' }));
}

export const billingRoutes = [
  route('billing.payment.list', 'GET', '/api/payment/v1/payment/history', 'billing.read', ({ tenant }) => tenant.payments),
  route('billing.payment.get', 'GET', '/api/payment/v1/payment/history/{orderID}', 'billing.read', ({ tenant, params }) =>
    find(tenant.payments, 'orderID', params.orderID as string, 'transaction'),
  ),
  route('billing.subscription', 'GET', '/api/user/v1/dashboard/subscription', 'billing.read', ({ tenant }) => tenant.subscription),
  route('billing.quota', 'GET', '/api/ai/v1/quota', 'quota.read', quota),
  route('billing.usage', 'GET', '/api/ai/v1/usage', 'quota.read', ({ tenant }) => tenant.usage),
  route('tenant.setting', 'GET', '/api/user/v1/dashboard/setting', 'tenant.setting.read', ({ tenant }) => tenant.setting),
  route('tenant.list', 'GET', '/api/user/v1/dashboard/tenant/list', 'tenant.read', tenantList),
];
