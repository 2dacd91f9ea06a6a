// The browser side of the test host: a page that renders a view the way an MCP Apps host does,
// with the ext-apps SDK's host half (AppBridge). The view runs in a sandboxed iframe (scripts only,
// an opaque origin) and talks JSON-RPC over postMessage; its tool calls go to the Node side
// (engageCallServerTool, exposed by the harness), which sends them to the real server.
import { AppBridge, PostMessageTransport, getToolUiResourceUri, type McpUiHostContext } from '@modelcontextprotocol/ext-apps/app-bridge';

type CallToolParams = Parameters<NonNullable<AppBridge['oncalltool']>>[0];
type CallToolResult = Awaited<ReturnType<NonNullable<AppBridge['oncalltool']>>>;
type Tool = NonNullable<McpUiHostContext['toolInfo']>['tool'];

export interface MountOptions {
  /** The view's HTML, as resources/read returned it. */
  html: string;
  /** The tool's definition, as tools/list returned it. */
  tool: Tool;
  toolInput: Record<string, unknown>;
  toolResult: CallToolResult | undefined;
  theme: 'light' | 'dark';
  width: number;
}

declare global {
  interface Window {
    engageHost: {
      mount(options: MountOptions): Promise<void>;
      modelContext: unknown[];
      log: string[];
      /** Sends the view the tool's input or result (again): a host that replays its notifications. */
      sendToolInput(args: Record<string, unknown>): Promise<void>;
      sendToolResult(result: CallToolResult): Promise<void>;
      /** Tells the view its tool call was cancelled (ui/notifications/tool-cancelled), as a host does when the person stops it. */
      sendToolCancelled(reason?: string): Promise<void>;
    };
    engageCallServerTool(params: CallToolParams): Promise<CallToolResult>;
  }
}

const modelContext: unknown[] = [];
const log: string[] = [];
let mounted: AppBridge | undefined;

async function mount(options: MountOptions): Promise<void> {
  const uri = getToolUiResourceUri(options.tool);
  if (!uri) throw new Error(`tool ${options.tool.name} names no ui:// view`);
  document.body.style.background = options.theme === 'dark' ? '#111214' : '#f6f7f9';
  document.documentElement.style.colorScheme = options.theme;

  const iframe = document.createElement('iframe');
  iframe.id = 'view-frame';
  iframe.title = `${options.tool.name}: ${uri}`;
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.style.cssText = `border: 0; width: ${options.width}px; height: 120px; display: block; background: transparent;`;
  document.getElementById('stage')!.append(iframe);
  const view = iframe.contentWindow!;

  const hostContext: McpUiHostContext = {
    theme: options.theme,
    toolInfo: { id: 1, tool: options.tool },
    displayMode: 'inline',
    availableDisplayModes: ['inline'],
    containerDimensions: { width: options.width, maxHeight: 2000 },
    locale: 'en-US',
    platform: 'web',
  };
  const bridge = new AppBridge(
    null,
    { name: 'engage-mcp test host', version: '0.1.0' },
    { serverTools: {}, logging: {}, updateModelContext: { text: {} } },
    { hostContext },
  );
  bridge.oncalltool = (params) => window.engageCallServerTool(params);
  bridge.onupdatemodelcontext = async (params) => {
    modelContext.push(params);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) iframe.style.height = `${Math.ceil(height)}px`;
  };
  bridge.onloggingmessage = (message) => void log.push(JSON.stringify(message));
  const initialized = new Promise<void>((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  // Listening before the view's document exists, so its ui/initialize is not missed.
  await bridge.connect(new PostMessageTransport(view, view));
  mounted = bridge;
  iframe.srcdoc = options.html;
  await initialized;
  await bridge.sendToolInput({ arguments: options.toolInput });
  // A host that has no result yet (the call still running, or cancelled) sends none.
  if (options.toolResult !== undefined) await bridge.sendToolResult(options.toolResult);
}

function bridge(): AppBridge {
  if (!mounted) throw new Error('no view is mounted');
  return mounted;
}

window.engageHost = {
  mount,
  modelContext,
  log,
  sendToolInput: (args) => bridge().sendToolInput({ arguments: args }),
  sendToolResult: (result) => bridge().sendToolResult(result),
  sendToolCancelled: (reason) => bridge().sendToolCancelled(reason === undefined ? {} : { reason }),
};
