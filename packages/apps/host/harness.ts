// The Node side of the test host: headless Chromium (Debian's, driven by playwright-core; nothing
// is downloaded), a host page speaking the MCP Apps protocol (host-page.ts), and the view's tool
// calls proxied to a real MCP client. Used by test/apps.browser.test.ts and scripts/screenshots.ts.
// Runs under the root tsconfig (no DOM types): code evaluated in the page reaches it via globalThis.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Frame, type FrameLocator, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface ToolCall {
  name: string;
  arguments?: Record<string, unknown>;
}

export type CallToolResult = {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
};

export interface ViewOptions {
  /** The view's HTML, as the server's resources/read returned it. */
  html: string;
  /** The tool's definition from tools/list (its _meta.ui.resourceUri names the view). */
  tool: { name: string; [key: string]: unknown };
  toolInput: Record<string, unknown>;
  /** Undefined: the host sends no result (the call is still running, or was cancelled). */
  toolResult: unknown;
  theme?: 'light' | 'dark';
  width?: number;
  /** Where the view's tools/call requests go: the real server's client. */
  callTool(call: ToolCall): Promise<unknown>;
  /** The page's timers and Date on Playwright's clock, moved on only by the test (`page.clock.runFor`): a view's polling tested without waiting it out. */
  fakeClock?: boolean;
  /** A touch screen: the view pressed by taps (`locator.tap()`). */
  hasTouch?: boolean;
}

export interface HostedView {
  page: Page;
  /** Locators inside the view's iframe. */
  view: FrameLocator;
  /** The view's document, for evaluating code in it. */
  frame: Frame;
  /** Every tools/call the view made, in order. */
  toolCalls: ToolCall[];
  /** Requests any page or frame tried to make: a view must make none. */
  networkRequests: string[];
  /** ui/update-model-context requests the view sent. */
  modelContext(): Promise<unknown[]>;
  /** Sends the view a tool input or result again, as a host replaying its notifications would. */
  sendToolInput(args: Record<string, unknown>): Promise<void>;
  sendToolResult(result: unknown): Promise<void>;
  /** Tells the view its tool call was cancelled (ui/notifications/tool-cancelled). */
  sendToolCancelled(reason?: string): Promise<void>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // playwright gives each launch a fresh, temporary profile (user data dir).
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

let hostPage: Promise<string> | undefined;

/** The host page: host-page.ts bundled with the ext-apps AppBridge, inline. */
function hostPageHtml(): Promise<string> {
  hostPage ??= build({
    entryPoints: [fileURLToPath(new URL('./host-page.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    logLevel: 'warning',
  }).then(
    (result) =>
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>engage-mcp test host</title></head>` +
      `<body style="margin:0;padding:16px"><div id="stage"></div><script>${result.outputFiles[0]!.text.replace(/<\/script/gi, '<\\/script')}</script></body></html>`,
  );
  return hostPage;
}

/** The calls a host makes of an MCP client (the SDK's Client has them all). */
export interface McpClientLike {
  listTools(): Promise<{ tools: Array<{ name: string; _meta?: Record<string, unknown>; [key: string]: unknown }> }>;
  readResource(request: { uri: string }): Promise<{ contents: Array<Record<string, unknown>> }>;
  callTool(request: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

/**
 * What an MCP Apps host does with a tool call: call the tool, read the ui:// resource its
 * definition names, and show the result in that view. The view's own tool calls go to the same
 * client (without the progress token the App adds: reporting progress is the host's business).
 */
export async function showToolCall(
  browser: Browser,
  client: McpClientLike,
  toolName: string,
  args: Record<string, unknown>,
  options: Pick<ViewOptions, 'theme' | 'width' | 'fakeClock'> = {},
): Promise<HostedView & { result: CallToolResult }> {
  const { tools } = await client.listTools();
  const tool = tools.find((candidate) => candidate.name === toolName);
  const uri = (tool?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;
  if (!tool || !uri) throw new Error(`${toolName} names no ui:// view`);
  const [content] = (await client.readResource({ uri })).contents;
  if (typeof content?.text !== 'string') throw new Error(`${uri} has no text`);
  const result = (await client.callTool({ name: toolName, arguments: args })) as CallToolResult;
  const view = await hostView(browser, {
    ...options,
    html: content.text,
    tool,
    toolInput: args,
    toolResult: result,
    callTool: ({ name, arguments: toolArgs }) => client.callTool({ name, arguments: toolArgs }),
  });
  return { ...view, result };
}

/** Opens a page that hosts one view for one tool call, as an MCP Apps host would. */
export async function hostView(browser: Browser, options: ViewOptions): Promise<HostedView> {
  const width = options.width ?? 560;
  const page = await browser.newPage({ viewport: { width: width + 32, height: 900 }, colorScheme: options.theme ?? 'light', hasTouch: options.hasTouch });
  const toolCalls: ToolCall[] = [];
  const networkRequests: string[] = [];
  page.on('request', (request) => networkRequests.push(request.url()));
  if (options.fakeClock) await page.clock.install();
  await page.route('**/*', (route) => route.abort());
  await page.exposeFunction('engageCallServerTool', async (call: ToolCall) => {
    toolCalls.push(call);
    return options.callTool(call);
  });
  await page.setContent(await hostPageHtml());
  await page.evaluate((mount) => (globalThis as unknown as { engageHost: { mount(options: unknown): Promise<void> } }).engageHost.mount(mount), {
    html: options.html,
    tool: options.tool,
    toolInput: options.toolInput,
    toolResult: options.toolResult,
    theme: options.theme ?? 'light',
    width,
  });
  const frame = await (await page.waitForSelector('#view-frame')).contentFrame();
  if (!frame) throw new Error('the view has no frame');
  return {
    page,
    view: page.frameLocator('#view-frame'),
    frame,
    toolCalls,
    networkRequests,
    modelContext: () => page.evaluate(() => (globalThis as unknown as { engageHost: { modelContext: unknown[] } }).engageHost.modelContext),
    sendToolInput: (args) =>
      page.evaluate((input) => (globalThis as unknown as { engageHost: { sendToolInput(a: unknown): Promise<void> } }).engageHost.sendToolInput(input), args),
    sendToolResult: (result) =>
      page.evaluate(
        (output) => (globalThis as unknown as { engageHost: { sendToolResult(r: unknown): Promise<void> } }).engageHost.sendToolResult(output),
        result,
      ),
    sendToolCancelled: (reason) =>
      page.evaluate(
        (why) => (globalThis as unknown as { engageHost: { sendToolCancelled(r?: string): Promise<void> } }).engageHost.sendToolCancelled(why),
        reason,
      ),
    close: () => page.close(),
  };
}

/**
 * Moves a fake-clock view's time on (`stepMs` at a time) until `done` holds. Between steps the real
 * event loop runs, so a tool call a timer started is answered before time moves far: a poll's next
 * timer is set on the view's own time, and none is skipped.
 */
export async function runClockUntil(view: HostedView, done: () => Promise<boolean> | boolean, { stepMs = 500, maxSteps = 400 } = {}): Promise<void> {
  for (let step = 0; step < maxSteps; step++) {
    if (await done()) return;
    await view.page.clock.runFor(stepMs);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the view did not get there in ${maxSteps} steps of ${stepMs} ms of its time`);
}

/** Moves a fake-clock view's time on by `totalMs` in ten steps, the real event loop run between them: for a test that nothing more happens. */
export async function runClockFor(view: HostedView, totalMs: number): Promise<void> {
  let steps = 0;
  await runClockUntil(view, () => steps++ === 10, { stepMs: totalMs / 10 });
}
