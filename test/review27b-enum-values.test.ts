// The values the spec allows for a field (campaign.create's channel: whatsapp, telegram or email) are in the tool
// description the model reads, the only place it learns a tool's params (design brief, "Two tools per server").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { DOMAINS, launchServer, type DomainName, type LaunchedServer } from '../packages/sandbox/src/index.js';
import { ALL_OPERATIONS, toolOf } from './helpers.js';

/** The allowed values of each top-level enum field of an operation's params (optional ones too). */
function enumFields(schema: z.ZodObject): Array<[string, string[]]> {
  return Object.entries(schema.shape).flatMap(([name, field]) => {
    let type = field as z.ZodType;
    while (type.def.type === 'optional' || type.def.type === 'default') type = (type as unknown as { unwrap(): z.ZodType }).unwrap();
    return type.def.type === 'enum' ? [[name, (type as unknown as z.ZodEnum).options.map(String)] as [string, string[]]] : [];
  });
}

const servers = {} as Record<DomainName, LaunchedServer>;
beforeAll(async () => {
  // Listing tools needs no API: any loopback address will do.
  const env = { ENGAGE_BASE_URL: 'http://127.0.0.1:9', ENGAGE_API_KEY: 'eng_live_enumvalues0000000000000000' };
  await Promise.all(DOMAINS.map(async (domain) => (servers[domain] = await launchServer(domain, env))));
});
afterAll(() => Promise.all(Object.values(servers).map((server) => server.close())));

describe('enum values in the tool descriptions', () => {
  it('names every allowed value of every enum field in the line of its operation', async () => {
    const descriptions = new Map<string, string>();
    for (const domain of DOMAINS) for (const tool of (await servers[domain].client.listTools()).tools) descriptions.set(tool.name, tool.description ?? '');
    const checked: string[] = [];
    for (const op of ALL_OPERATIONS) {
      const line = (descriptions.get(toolOf(op.id)) ?? '').split('\n').find((text) => text.startsWith(`- ${op.id} `)) ?? '';
      for (const [field, values] of enumFields(op.params)) {
        for (const value of values) expect(line, `${op.id} ${field}`).toContain(value);
        checked.push(`${op.id}.${field}`);
      }
    }
    expect(checked).toContain('campaign.create.channel');
  });
});
