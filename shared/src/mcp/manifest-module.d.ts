// The build (scripts/build.mjs) turns `engage:manifest` into the domain's manifest, computed
// from its catalog, so listing tools needs neither zod nor the catalog at start-up.
declare module 'engage:manifest' {
  const manifest: import('../model/manifest.js').DomainManifest;
  export default manifest;
}
