// MCP Apps (io.modelcontextprotocol/ui): which view shows which tool's results, and the views as
// ui:// resources. A host that renders MCP Apps reads `_meta.ui.resourceUri` on a tool, fetches
// that resource and shows the tool's result in it; any other host ignores both, so it sees the
// same tools, text and structuredContent as without them. The views' HTML is loaded only when a
// host reads one: listing tools stays as cheap as before.
import { RESOURCE_MIME_TYPE, registerAppResource } from '@modelcontextprotocol/ext-apps/server';
import type { McpServer } from '@modelcontextprotocol/server';
import { VIEWS, loadViewHtml, type ViewInfo } from '@engage-mcp/apps/views';
import type { OperationInfo, ToolInfo } from '../model/manifest.js';

/** The view in which a person confirms or cancels a preview. */
export const CONFIRMATION_VIEW = 'confirm-card';

export type { ViewInfo };

/**
 * The view for a tool's results: the confirmation card for an action tool with a gated operation
 * (its previews carry a confirmationToken), else the view its operations name in the catalog.
 */
export function viewOf(
  tool: Pick<ToolInfo, 'name' | 'kind'>,
  operations: readonly OperationInfo[],
  gated: (op: OperationInfo) => boolean,
): ViewInfo | undefined {
  const name = tool.kind === 'action' ? (operations.some(gated) ? CONFIRMATION_VIEW : undefined) : operations.find((op) => op.view)?.view;
  if (name === undefined) return undefined;
  const view = VIEWS.find((candidate) => candidate.name === name);
  if (!view) throw new Error(`${tool.name} names the view ${name}, which packages/apps/views.json does not have`);
  return view;
}

/** The tool definition's `_meta`: the ui:// resource its results are shown in (the spec's current key only; the flat "ui/resourceUri" is deprecated). */
export function toolViewMeta(view: ViewInfo | undefined): { _meta: { ui: { resourceUri: string } } } | Record<string, never> {
  return view ? { _meta: { ui: { resourceUri: view.uri } } } : {};
}

/** Registers each view that a tool of this server uses as a ui:// resource, served as MCP Apps HTML. */
export function registerViews(mcp: Pick<McpServer, 'registerResource'>, views: Iterable<ViewInfo | undefined>): void {
  const used = new Map<string, ViewInfo>();
  for (const view of views) if (view) used.set(view.uri, view);
  for (const view of used.values()) {
    registerAppResource(mcp, view.name, view.uri, { title: view.title, description: view.description }, async () => ({
      // No csp: a view loads nothing, so the host's restrictive default applies. The view draws its own frame.
      contents: [{ uri: view.uri, mimeType: RESOURCE_MIME_TYPE, text: await loadViewHtml(view.name), _meta: { ui: { prefersBorder: false } } }],
    }));
  }
}
