// The tenant domain: the company profile and the tenants the key's holder can reach. Read-only,
// so its two tools split by shape: tenant_list and tenant_get.
import { z } from 'zod';
import { defineReadOnlyDomain } from '@engage-mcp/shared';

export const tenant = defineReadOnlyDomain(
  'tenant',
  'Tenant',
  [
    {
      id: 'tenant.list',
      method: 'GET',
      path: '/api/user/v1/dashboard/tenant/list',
      scope: 'tenant.read',
      risk: 'safe',
      summary: 'Tenants the key holder can reach.',
      params: z.strictObject({}),
      list: {},
      // Other tenants' names, written by their owners.
      customerText: true,
    },
    {
      id: 'tenant.setting',
      method: 'GET',
      path: '/api/user/v1/dashboard/setting',
      scope: 'tenant.setting.read',
      risk: 'safe',
      summary: 'Company profile: name, address, contact, working hours.',
      params: z.strictObject({}),
    },
  ],
  {
    tenant_list: { title: 'Tenant: list', operationIds: ['tenant.list'] },
    tenant_get: { title: 'Tenant: profile', operationIds: ['tenant.setting'] },
  },
);
