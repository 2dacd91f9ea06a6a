// The campaign dashboard, shown for campaign_read's results: campaign.progress as a progress bar
// and counts that refresh while the campaign is sending, campaign.analytics as a chart of sent,
// opened and failed, and campaign.list as a table. The API does not type progress or analytics,
// so numbers are found by the field names the spec uses for campaigns (sentCount,
// totalRecipients) and their plain forms (sent, total); anything else is listed as it came.
// Every number is also written out as text.
import {
  el,
  formatNumber,
  formatTime,
  hostToolName,
  render,
  resultText,
  root,
  startView,
  structured,
  svg,
  withoutStackedMarks,
  type Arguments,
  type CallToolResult,
} from './kit.js';

const POLL_INTERVAL_MS = 1500;
/** Consecutive failed refreshes after which polling stops and a Refresh button is offered. */
const MAX_POLL_FAILURES = 3;
/**
 * Refreshes that may bring nothing new, and how long refreshing may go on in all, before it stops
 * and the person is offered Refresh: a campaign the API calls active with nothing moving (scheduled
 * for later, a stuck send) is not read every 1.5 s for as long as the view is on screen.
 */
const MAX_UNCHANGED_POLLS = 20;
const MAX_POLLING_MS = 10 * 60 * 1000;
const ACTIVE_STATUS = /^(sending|queued|running|processing|in[ _-]?progress|pending|scheduled)$/i;

type Data = Record<string, unknown>;

const FIELDS = {
  total: ['totalRecipients', 'total', 'recipients'],
  sent: ['sentCount', 'sent'],
  opened: ['openedCount', 'opened'],
  failed: ['failedCount', 'failed'],
  percent: ['percent', 'percentage', 'progress'],
} as const;

const LABELS: Record<string, string> = {
  totalRecipients: 'Recipients',
  sentCount: 'Sent',
  openedCount: 'Opened',
  failedCount: 'Failed',
  percent: 'Percent',
};

let callArguments: Arguments = {};
let stopPolling: (() => void) | undefined;
/**
 * Counts what the view was asked to show (a result from the host, a Progress pressed): an answer is
 * drawn only when nothing was asked for since its own request, or answers that came back out of
 * order drew an earlier campaign's progress under the later one's id.
 */
let latestRequest = 0;
/** Something was drawn in place of "Loading…" (a result, or that the call was cancelled). */
let drawn = false;

const app = startView('campaign dashboard', {
  onInput(args) {
    callArguments = args;
  },
  onResult(result) {
    latestRequest++;
    drawn = true;
    show(result);
  },
  onCancelled(reason) {
    // Before any result the view would say "Loading…" for as long as it is on screen.
    if (drawn) return;
    drawn = true;
    render(
      el('section', {}, [
        el('h1', { text: 'Campaigns' }),
        el('p', {
          class: 'notice notice-warning',
          text: `The host cancelled this call${reason ? ` (${withoutStackedMarks(reason)})` : ''}: there is nothing to show.`,
          attrs: { role: 'status' },
        }),
      ]),
    );
  },
  onTeardown() {
    stopPolling?.();
  },
});

function toolName(): string {
  return hostToolName(app) ?? 'campaign_read';
}

function show(result: CallToolResult): void {
  stopPolling?.();
  const content = structured(result);
  if (result.isError) {
    render(
      el('section', {}, [
        el('h1', { text: 'Campaigns' }),
        el('p', { class: 'notice notice-danger', text: withoutStackedMarks(resultText(result)), attrs: { role: 'alert' } }),
      ]),
    );
    return;
  }
  const operationId = String(content.operationId ?? callArguments.operationId ?? '');
  const data = content.data;
  if (operationId === 'campaign.progress' && isRecord(data)) showProgress({ data, notes: content.notes }, progressId(data));
  else if (operationId === 'campaign.analytics' && isRecord(data)) showAnalytics(data, content.notes);
  else if (operationId === 'campaign.list' && Array.isArray(data)) showList(data.filter(isRecord), content.page, content.notes);
  else
    render(
      el('section', {}, [
        el('h1', { text: operationId || 'Campaigns' }),
        ...notesOf(content.notes),
        isRecord(data) ? countsList(data) : el('p', { class: 'statement', text: withoutStackedMarks(JSON.stringify(data, null, 2) ?? '') }),
      ]),
    );
}

function progressId(data: Data): string | undefined {
  const params = callArguments.params;
  const fromCall = isRecord(params) && typeof params.id === 'string' ? params.id : undefined;
  return fromCall ?? (typeof data._id === 'string' ? data._id : undefined);
}

// ---- progress ----------------------------------------------------------------------------

interface Progress {
  status?: string;
  total?: number;
  sent?: number;
  opened?: number;
  failed?: number;
  /** Whole percent sent, as the counts (or the API) say: below 0 or above 100 when they do; undefined when neither gives it. */
  percent?: number;
}

function readProgress(data: Data): Progress {
  const total = pick(data, FIELDS.total);
  const sent = pick(data, FIELDS.sent);
  // From the counts written beside it, so the two never disagree (an API rounding 999,999 of
  // 1,000,000 to 100 would read as done); else the API's own percentage; else not known, never 0.
  // Rounded down, and not clamped: 250 of 100 is 250%, not 100%. Only the bar stops at its ends.
  const fromCounts = total !== undefined && sent !== undefined && total > 0 ? finite((sent / total) * 100) : undefined;
  const percent = fromCounts ?? pick(data, FIELDS.percent);
  return {
    status: typeof data.status === 'string' ? data.status : undefined,
    total,
    sent,
    opened: pick(data, FIELDS.opened),
    failed: pick(data, FIELDS.failed),
    percent: percent === undefined ? undefined : Math.floor(percent),
  };
}

function isActive(progress: Progress): boolean {
  return progress.status !== undefined ? ACTIVE_STATUS.test(progress.status) : (progress.percent ?? 0) < 100;
}

/** The progress view's nodes, built once: each reading updates them in place, so focus and screen readers keep their place. */
interface ProgressView {
  badge: HTMLElement;
  fill: HTMLElement;
  bar: HTMLElement;
  summary: HTMLElement;
  /** The server's notes on the reading shown (that it was shortened, that its strings are customers'). */
  notes: HTMLElement;
  counts: HTMLElement;
  chart: HTMLElement;
  announce: HTMLElement;
  updated: HTMLElement;
  refresh: HTMLElement;
  /** The status last shown: only a change of it is announced. */
  lastStatus?: string;
}

/** What a polling run has seen so far, to know when to give up. */
interface PollWatch {
  started: number;
  failures: number;
  unchanged: number;
  last?: string;
}

/** One answer of campaign.progress: its data, and the server's notes on it. */
interface Reading {
  data: Data;
  notes: unknown;
}

function showProgress(initial: Reading, id: string | undefined): void {
  const view = progressView();
  const poll = () => {
    if (id) pollProgress(view, id);
  };
  view.refresh.addEventListener('click', () => {
    poll();
    // The button pressed is hidden while it refreshes: keyboard focus waits on what is refreshed, not the document's body.
    view.summary.focus();
  });
  render(progressSection(view, id));
  const progress = updateProgress(view, initial);
  if (isActive(progress)) poll();
  else view.refresh.hidden = !id;
}

function progressView(): ProgressView {
  const fill = el('span');
  return {
    badge: el('span', { class: 'badge' }),
    fill,
    bar: el('div', { class: 'progress', attrs: { role: 'progressbar', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-labelledby': 'progress-text' } }, [
      fill,
    ]),
    summary: el('p', { class: 'progress-text', attrs: { id: 'progress-text', tabindex: '-1' } }),
    notes: el('div'),
    counts: el('div'),
    chart: el('div'),
    announce: el('p', { class: 'sr-only', attrs: { role: 'status', 'aria-live': 'polite' } }),
    updated: el('p', { class: 'muted' }),
    refresh: el('button', { text: 'Refresh', attrs: { type: 'button' } }),
  };
}

function progressSection(view: ProgressView, id: string | undefined): HTMLElement {
  return el('section', { attrs: { 'aria-labelledby': 'dashboard-title' } }, [
    el('div', { class: 'head' }, [el('h1', { text: 'Campaign progress', attrs: { id: 'dashboard-title' } }), view.badge]),
    id ? el('p', { class: 'muted' }, ['Campaign ', el('span', { class: 'mono', text: id })]) : undefined,
    view.notes,
    view.bar,
    view.summary,
    view.counts,
    view.chart,
    view.announce,
    view.updated,
    el('div', { class: 'actions' }, [view.refresh]),
  ]);
}

/** Shows one reading of the progress in the view's nodes. */
function updateProgress(view: ProgressView, { data, notes }: Reading): Progress {
  const progress = readProgress(data);
  view.notes.replaceChildren(...notesOf(notes));
  const { badge, bar, summary } = view;
  badge.textContent = progress.status ?? (data.status === undefined || data.status === null ? 'status not given' : shown(data.status));
  badge.className = badgeClass(progress.status);
  view.fill.style.width = `${barWidth(progress.percent)}%`;
  const ofTotal =
    progress.sent !== undefined && progress.total !== undefined
      ? ` · ${formatNumber(progress.sent, app)} of ${formatNumber(progress.total, app)} recipients`
      : '';
  summary.textContent = `${percentText(progress.percent)}${ofTotal}`;
  // Without a percentage the bar is indeterminate: no aria-valuenow.
  if (progress.percent === undefined) bar.removeAttribute('aria-valuenow');
  else bar.setAttribute('aria-valuenow', String(barWidth(progress.percent)));
  bar.setAttribute('aria-valuetext', summary.textContent);
  view.counts.replaceChildren(countsList(data));
  view.chart.replaceChildren(outcomeChart(progress.sent, progress.opened, progress.failed));
  view.updated.textContent = `Updated ${formatTime(Date.now())}.`;
  // Announced on a change of status only: a reading every 1.5 s would drown everything else.
  if (progress.status !== view.lastStatus) view.announce.textContent = `Campaign ${progress.status ?? 'progress'}: ${summary.textContent}.`;
  view.lastStatus = progress.status;
  return progress;
}

/**
 * Reads the progress every POLL_INTERVAL_MS until the campaign is no longer active, nothing has
 * moved for long, or reading it keeps failing; then Refresh is offered again.
 */
function pollProgress(view: ProgressView, id: string): void {
  view.refresh.hidden = true;
  const watch: PollWatch = { started: Date.now(), failures: 0, unchanged: 0 };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  stopPolling = () => {
    stopped = true;
    clearTimeout(timer);
    view.refresh.hidden = false;
    // Focus moved to the summary by Refresh goes back to it: the person is where they pressed it.
    if (document.activeElement === view.summary) view.refresh.focus();
  };
  const tick = async () => {
    if (stopped) return;
    try {
      const reading = await fetchProgress(id);
      if (stopped) return;
      watch.failures = 0;
      if (!showReading(view, reading, watch)) return stopPolling?.();
    } catch (error) {
      if (stopped) return;
      if (++watch.failures >= MAX_POLL_FAILURES) {
        view.updated.textContent = `Stopped refreshing: ${error instanceof Error ? error.message : String(error)}`;
        return stopPolling?.();
      }
    }
    timer = setTimeout(() => void tick(), POLL_INTERVAL_MS);
  };
  timer = setTimeout(() => void tick(), POLL_INTERVAL_MS);
}

/** One reading of the campaign's progress; throws when the answer has none. */
async function fetchProgress(id: string): Promise<Reading> {
  const result = (await app.callServerTool({ name: toolName(), arguments: { operationId: 'campaign.progress', params: { id } } })) as CallToolResult;
  const { data, notes } = structured(result);
  if (result.isError || !isRecord(data)) throw new Error(resultText(result) || 'the answer had no progress data');
  return { data, notes };
}

/** Shows a reading; whether polling goes on (not once the campaign is done, nor when nothing has moved for long). */
function showReading(view: ProgressView, reading: Reading, watch: PollWatch): boolean {
  if (!isActive(updateProgress(view, reading))) return false;
  const seen = JSON.stringify(reading.data);
  watch.unchanged = seen === watch.last ? watch.unchanged + 1 : 0;
  watch.last = seen;
  if (watch.unchanged < MAX_UNCHANGED_POLLS && Date.now() - watch.started < MAX_POLLING_MS) return true;
  const why = watch.unchanged >= MAX_UNCHANGED_POLLS ? `no change for ${(MAX_UNCHANGED_POLLS * POLL_INTERVAL_MS) / 1000} s` : 'refreshed for 10 minutes';
  view.updated.textContent = `Stopped refreshing: ${why}. Press Refresh to follow it again.`;
  return false;
}

// ---- analytics ---------------------------------------------------------------------------

function showAnalytics(data: Data, notes: unknown): void {
  const sent = pick(data, FIELDS.sent);
  const opened = pick(data, FIELDS.opened);
  const failed = pick(data, FIELDS.failed);
  const rate = (part: number | undefined, label: string) => {
    const percent = part !== undefined && sent ? finite(Math.round((part / sent) * 1000) / 10) : undefined;
    return percent === undefined ? undefined : el('li', { text: `${label}: ${formatNumber(percent, app)}% of sent` });
  };
  render(
    el('section', { attrs: { 'aria-labelledby': 'dashboard-title' } }, [
      el('h1', { text: 'Campaign analytics', attrs: { id: 'dashboard-title' } }),
      ...notesOf(notes),
      countsList(data),
      outcomeChart(sent, opened, failed),
      el('ul', { class: 'facts' }, [rate(opened, 'Opened'), rate(failed, 'Failed')]),
    ]),
  );
}

// ---- list --------------------------------------------------------------------------------

function showList(campaigns: Data[], page: unknown, notes: unknown): void {
  const range = rangeText(campaigns.length, isRecord(page) ? page : {});
  const rows = campaigns.map((campaign) => {
    const progress = readProgress(campaign);
    const id = typeof campaign._id === 'string' ? campaign._id : undefined;
    // A name of nothing but blanks read as a row with no name, its button "Show the progress of ".
    const unnamed = campaign.name === undefined || (typeof campaign.name === 'string' && campaign.name.trim() === '');
    const name = unnamed ? (id ?? '—') : shown(campaign.name);
    const counts =
      progress.sent !== undefined && progress.total !== undefined
        ? `${formatNumber(progress.sent, app)} of ${formatNumber(progress.total, app)}${progress.percent === undefined ? '' : ` (${formatNumber(progress.percent, app)}%)`}`
        : '—';
    const watch = el('button', { text: 'Progress', attrs: { type: 'button', 'aria-label': `Show the progress of ${name}` } });
    watch.addEventListener('click', () => void openProgress(id));
    return el('tr', {}, [
      el('td', { class: 'name', text: name }),
      el('td', {}, [el('span', { class: 'cell', text: campaign.channel === undefined ? '—' : shown(campaign.channel) })]),
      el('td', {}, [
        el('span', {
          class: badgeClass(campaign.status),
          text: campaign.status === undefined ? '—' : shown(campaign.status),
        }),
      ]),
      // Counts of ordinary length stay on one line; numbers of many digits may wrap (style.css).
      el('td', { class: counts.length > 24 ? 'num long' : 'num' }, [counts, progress.total !== undefined ? progressBar(progress.percent, counts) : undefined]),
      el('td', {}, id ? [watch] : []),
    ]);
  });
  render(
    el('section', { attrs: { 'aria-labelledby': 'dashboard-title' } }, [
      el('div', { class: 'head' }, [el('h1', { text: 'Campaigns', attrs: { id: 'dashboard-title' } }), el('span', { class: 'muted', text: range })]),
      ...notesOf(notes),
      withTableRoles(
        el('table', {}, [
          el('thead', {}, [
            el(
              'tr',
              {},
              ['Name', 'Channel', 'Status', 'Sent', ''].map((title) => el('th', { text: title, attrs: { scope: 'col' } })),
            ),
          ]),
          el('tbody', {}, rows),
        ]),
      ),
    ]),
  );
}

/**
 * Which of the campaigns these are: "1–20 of 45". After a search, of those it matched, with how many
 * there are in all: "of" all of them read as if the rest were on later pages.
 */
function rangeText(shown: number, page: Data): string {
  const total = typeof page.total === 'number' ? page.total : shown;
  const matched = typeof page.matched === 'number' ? page.matched : total;
  const offset = typeof page.offset === 'number' ? page.offset : 0;
  const of = matched === total ? formatNumber(total, app) : `${formatNumber(matched, app)} matching (${formatNumber(total, app)} in all)`;
  return shown === 0
    ? matched === total
      ? 'none'
      : `none matching (${formatNumber(total, app)} in all)`
    : `${formatNumber(offset + 1, app)}–${formatNumber(offset + shown, app)} of ${of}`;
}

const TABLE_ROLES: Record<string, string> = { TABLE: 'table', THEAD: 'rowgroup', TBODY: 'rowgroup', TR: 'row', TH: 'columnheader', TD: 'cell' };

/**
 * Says each part of the table's role outright: in a narrow frame style.css lays the rows out as
 * blocks, and Chromium then reads them as plain text, without the column headers (which stay for
 * screen readers, visually hidden) that say which value is the status and which the count.
 */
function withTableRoles(table: HTMLElement): HTMLElement {
  for (const part of [table, ...table.querySelectorAll('thead, tbody, tr, th, td')]) {
    const role = TABLE_ROLES[part.tagName];
    if (role) part.setAttribute('role', role);
  }
  return table;
}

async function openProgress(id: string | undefined): Promise<void> {
  if (!id) return;
  const request = ++latestRequest;
  const args = { operationId: 'campaign.progress', params: { id } };
  try {
    const result = (await app.callServerTool({ name: toolName(), arguments: args })) as CallToolResult;
    if (request !== latestRequest) return;
    callArguments = args;
    show(result);
  } catch (error) {
    if (request !== latestRequest) return;
    render(
      el('p', {
        class: 'notice notice-danger',
        text: `Could not read the progress: ${error instanceof Error ? error.message : String(error)}`,
        attrs: { role: 'alert' },
      }),
    );
  }
  focusWhatWasOpened();
}

/**
 * The list, and the Progress button pressed in it, are gone: keyboard focus goes to the heading of
 * what took their place (or its error), which a screen reader then reads, and Tab goes on from
 * there. It fell to the document's body, and the person was back at the top with nothing said.
 */
function focusWhatWasOpened(): void {
  const target = root().querySelector<HTMLElement>('h1, [role="alert"]');
  if (!target) return;
  target.tabIndex = -1;
  target.focus();
}

// ---- pieces ------------------------------------------------------------------------------

/**
 * The server's notes on an answer, each a line: that it was too large and was shortened (long texts
 * cut, long lists cut), that its strings were written by customers. Progress and analytics showed
 * none: a record the server had cut was drawn as if whole.
 */
function notesOf(notes: unknown): HTMLElement[] {
  return Array.isArray(notes) ? notes.map((note) => el('p', { class: 'muted note', text: shown(note) })) : [];
}

/** The percentage as words: the number as reported (not clamped), or that there is none. */
function percentText(percent: number | undefined): string {
  return percent === undefined ? 'Progress not given' : `${formatNumber(percent, app)}% sent`;
}

/** How much of a bar is filled: the percentage, within the bar's ends. */
function barWidth(percent: number | undefined): number {
  return Math.max(0, Math.min(100, percent ?? 0));
}

function progressBar(percent: number | undefined, label: string): HTMLElement {
  const fill = el('span');
  fill.style.width = `${barWidth(percent)}%`;
  return el(
    'div',
    {
      class: 'progress small',
      attrs: {
        role: 'progressbar',
        'aria-valuemin': '0',
        'aria-valuemax': '100',
        ...(percent === undefined ? {} : { 'aria-valuenow': String(barWidth(percent)) }),
        'aria-valuetext': label,
      },
    },
    [fill],
  );
}

/** Every number in the record, labelled; other fields as short text (the id and status are shown above), API text as shown() writes it. */
function countsList(data: Data): HTMLElement {
  const entries = Object.entries(data).filter(([key, value]) => key !== '_id' && key !== 'status' && value !== null && typeof value !== 'object');
  return el(
    'dl',
    { class: 'counts' },
    entries.map(([key, value]) =>
      el('div', {}, [
        el('dt', { text: withoutStackedMarks(labelOf(key)) }),
        el('dd', { text: typeof value === 'number' ? formatNumber(value, app) : shown(value) }),
      ]),
    ),
  );
}

/** Sent, opened and failed as horizontal bars, each with its number written beside it. */
function outcomeChart(sent: number | undefined, opened: number | undefined, failed: number | undefined): HTMLElement {
  const bars = [
    { label: 'Sent', value: sent, kind: 'sent' },
    { label: 'Opened', value: opened, kind: 'opened' },
    { label: 'Failed', value: failed, kind: 'failed' },
  ].filter((bar): bar is { label: string; value: number; kind: string } => bar.value !== undefined);
  if (bars.length === 0) return el('span');
  const max = Math.max(1, ...bars.map((bar) => bar.value));
  // Drawn at most at its own size (style.css), so its 12px labels match the text around it. The
  // numbers' column is as wide as the longest (about 7.5 units a character at 12px): a fixed one
  // cut 123,456,789 to "123,456,7" at the chart's edge. Past 420 the whole chart is scaled down.
  const values = bars.map((bar) => formatNumber(bar.value, app));
  const labelWidth = 64;
  const valueWidth = Math.max(70, 12 + Math.ceil(7.5 * Math.max(...values.map((value) => value.length))));
  const track = Math.max(120, 420 - labelWidth - valueWidth);
  const width = labelWidth + track + valueWidth;
  const row = 28;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${bars.length * row}`, role: 'img', 'aria-labelledby': 'chart-caption', class: 'chart' });
  bars.forEach((bar, index) => {
    const y = index * row;
    chart.append(
      svg('text', { x: 0, y: y + 18 }, bar.label),
      svg('rect', { x: labelWidth, y: y + 6, width: track, height: 16, rx: 4, class: 'track' }),
      svg('rect', { x: labelWidth, y: y + 6, width: Math.max(bar.value > 0 ? 2 : 0, (bar.value / max) * track), height: 16, rx: 4, class: `bar-${bar.kind}` }),
      svg('text', { x: width - valueWidth + 8, y: y + 18 }, values[index]!),
    );
  });
  const caption = bars.map((bar) => `${bar.label} ${formatNumber(bar.value, app)}`).join(', ');
  return el('figure', { class: 'chart' }, [el('figcaption', { text: caption, attrs: { id: 'chart-caption' } }), chart]);
}

/** A ratio of two finite counts can still be beyond any number (5 of 1e-320): that is no percent to show. */
function finite(value: number): number | undefined {
  return Number.isFinite(value) ? value : undefined;
}

function pick(data: Data, names: readonly string[]): number | undefined {
  for (const name of names) {
    const value = data[name];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return undefined;
}

/**
 * A status badge's classes: one, badge-<status>, of the status's letters, digits and dashes. The
 * status is the API's: each word of it was a class (`completed sr-only` hid the badge).
 */
function badgeClass(status: unknown): string {
  return `badge badge-${typeof status === 'string' ? status.toLowerCase().replace(/[^a-z0-9-]/g, '') : ''}`;
}

/**
 * A value as text: a string as it is, anything else as its JSON, so a list or an object is shown
 * as one (String() made ['Promo', 'Ramadan'] read as the name 'Promo,Ramadan', and an object
 * '[object Object]').
 */
function shown(value: unknown): string {
  return withoutStackedMarks(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)));
}

function labelOf(key: string): string {
  // Its own labels only: a field named `constructor` or `toString` found Object's, a function, and the view threw.
  if (Object.hasOwn(LABELS, key)) return LABELS[key] as string;
  const words = key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function isRecord(value: unknown): value is Data {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
