// What both views share: the connection to the host (the ext-apps App), the theme, and building
// DOM nodes. Everything shown is set with textContent or attributes, never parsed as HTML: names
// and messages in the data are written by customers.
// First, before the SDK's modules run: the view's own Content Security Policy (lock.ts).
import './lock.js';
import { App, applyDocumentTheme, applyHostStyleVariables, type McpUiHostContext } from '@modelcontextprotocol/ext-apps';

export type CallToolResult = Awaited<ReturnType<App['callServerTool']>>;
export type Arguments = Record<string, unknown>;

export interface ViewHandlers {
  /** The arguments of the tool call this view shows (ui/notifications/tool-input). */
  onInput(args: Arguments): void;
  /** The result of that call (ui/notifications/tool-result). */
  onResult(result: CallToolResult): void;
  /** The host cancelled the tool call (ui/notifications/tool-cancelled): the person stopped it, or the host gave up. */
  onCancelled(reason: string | undefined): void;
  /** The host is about to remove the view: stop timers. */
  onTeardown?(): void;
}

/** Connects to the host, follows its theme, and hands the tool's input and result to the view. */
export function startView(name: string, handlers: ViewHandlers): App {
  const app = new App({ name: `engage-mcp ${name}`, version: '0.1.0' });
  app.ontoolinput = ({ arguments: args }) => handlers.onInput(args ?? {});
  app.ontoolresult = (result) => handlers.onResult(result as CallToolResult);
  app.ontoolcancelled = ({ reason }) => handlers.onCancelled(typeof reason === 'string' && reason.trim() !== '' ? reason : undefined);
  app.onhostcontextchanged = (context) => followHost(context);
  app.onteardown = async () => {
    handlers.onTeardown?.();
    return {};
  };
  app
    .connect()
    .then(() => followHost(app.getHostContext()))
    .catch((error: unknown) => showFatal(`Could not connect to the host: ${error instanceof Error ? error.message : String(error)}`));
  return app;
}

/**
 * The host's theme and colour variables, when it gives them; otherwise the stylesheet follows
 * prefers-color-scheme. Host fonts are not applied: they may come from the network.
 */
function followHost(context: Partial<McpUiHostContext> | undefined): void {
  if (!context) return;
  if (context.theme === 'light' || context.theme === 'dark') applyDocumentTheme(context.theme);
  if (context.styles?.variables) applyHostStyleVariables(context.styles.variables);
}

/** The name of the tool this view was opened for, when the host says (hostContext.toolInfo). */
export function hostToolName(app: App): string | undefined {
  const name = app.getHostContext()?.toolInfo?.tool?.name;
  return typeof name === 'string' ? name : undefined;
}

export function resultText(result: CallToolResult): string {
  return result.content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .filter(Boolean)
    .join('\n');
}

export function structured(result: CallToolResult): Record<string, unknown> {
  const value = result.structuredContent;
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

type Child = Node | string | undefined | false;

/** An element with text and attributes; strings become text nodes, never markup. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: { class?: string; text?: string; attrs?: Record<string, string> } = {},
  children: Child[] = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.class) node.className = props.class;
  if (props.text !== undefined) node.textContent = props.text;
  for (const [key, value] of Object.entries(props.attrs ?? {})) node.setAttribute(key, value);
  for (const child of children) if (child !== undefined && child !== false) node.append(child);
  return node;
}

const SVG = 'http://www.w3.org/2000/svg';
export function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Replaces the view's content. */
export function render(...nodes: Node[]): void {
  root().replaceChildren(...nodes);
}

export function root(): HTMLElement {
  return document.getElementById('view') as HTMLElement;
}

function showFatal(message: string): void {
  render(el('p', { class: 'notice notice-danger', text: message, attrs: { role: 'alert' } }));
}

let formatter: Intl.NumberFormat | undefined;
/** Below this the format's three decimals round a number to 0. */
const ROUNDS_TO_ZERO = 0.0005;

/**
 * A number as the person reads it (the host's locale when it gives one). One the format would write
 * as 0 but is not (a count of 1e-300 or -0.0001 from a hostile API) is written as JavaScript writes
 * it: "0 recipients" would be a count of none where the API gave one.
 */
export function formatNumber(value: number, app?: App): string {
  formatter ??= new Intl.NumberFormat(app?.getHostContext()?.locale ?? undefined);
  return value !== 0 && Math.abs(value) < ROUNDS_TO_ZERO ? String(value) : formatter.format(value);
}

export function formatTime(iso: string | number): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** A moment as the person reads it: its time of day, with its date when that is not today. */
export function formatMoment(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const time = formatTime(iso);
  return date.toDateString() === new Date().toDateString() ? time : `${date.toLocaleDateString()} ${time}`;
}

/** A nonspacing or enclosing mark after 4 others in a row (the server's previews keep as many: shared/src/safe/sanitize.ts). */
const STACKED_MARK = /(?<=[\p{Mn}\p{Me}]{4})[\p{Mn}\p{Me}]/gu;

/**
 * API text as a view shows it: combining marks past 4 in a row on one letter written as escapes
 * (\u{301}), so that hundreds of them (“Zalgo” text) cannot rise out of their line and paint over
 * the rows around it. The text is still shown whole.
 */
export function withoutStackedMarks(text: string): string {
  return text.replace(STACKED_MARK, (mark) => `\\u{${(mark.codePointAt(0) as number).toString(16).toUpperCase()}}`);
}
