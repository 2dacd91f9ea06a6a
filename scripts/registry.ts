// npm run registry: writes packages/<domain>/server.json, each server's entry for the MCP
// registry (published with the registry's mcp-publisher from that folder). The name is the
// package.json's mcpName, which the registry checks against the npm package it points to.
// A test fails when a committed file differs from what this computes.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DomainManifest } from '@engage-mcp/shared';
import { manifests } from './catalogs.js';
import { ROOT, readPackageJson, repositoryWebUrl, settingsFor, type PackageJson } from './distribution.js';

/** The version of the registry's server.json schema these files follow (registry/README.md). */
export const SERVER_SCHEMA_URL = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

export function serverJson(domain: string, manifest: DomainManifest, pkg: PackageJson) {
  if (!pkg.mcpName) throw new Error(`packages/${domain}/package.json has no mcpName: the registry needs it to match server.json's name.`);
  return {
    $schema: SERVER_SCHEMA_URL,
    name: pkg.mcpName,
    title: `Engage: ${manifest.title}`,
    description: pkg.description,
    version: pkg.version,
    repository: { url: repositoryWebUrl(pkg), source: 'github', subfolder: `packages/${domain}` },
    websiteUrl: `${repositoryWebUrl(pkg)}#install`,
    packages: [
      {
        registryType: 'npm',
        registryBaseUrl: 'https://registry.npmjs.org',
        identifier: pkg.name,
        version: pkg.version,
        runtimeHint: 'npx',
        transport: { type: 'stdio' },
        environmentVariables: settingsFor(manifest).map((setting) => ({
          name: setting.env,
          description: setting.description,
          isRequired: setting.required === true,
          isSecret: setting.secret === true,
          format: setting.format ?? 'string',
          ...(setting.default !== undefined ? { default: setting.default } : {}),
          ...(setting.choices ? { choices: setting.choices } : {}),
          ...(setting.placeholder ? { placeholder: setting.placeholder } : {}),
        })),
      },
    ],
  };
}

export function serverJsonText(domain: string): string {
  const manifest = manifests()[domain] as DomainManifest;
  return `${JSON.stringify(serverJson(domain, manifest, readPackageJson(`packages/${domain}`)), null, 2)}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const domain of Object.keys(manifests())) {
    const path = join(ROOT, 'packages', domain, 'server.json');
    await writeFile(path, serverJsonText(domain));
    console.log(path);
  }
}
