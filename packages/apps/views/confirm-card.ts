// The confirmation card: shown for an action tool's result. A preview (outcome "preview", with a
// confirmationToken) becomes a statement and two buttons. Confirm repeats the very call the model
// made (same tool, operationId and params) with the token from this card, once; Cancel forgets
// the token and sends nothing. Any other result (done, declined, refused, outcome unknown) is
// shown as it is.
import { el, formatMoment, hostToolName, render, resultText, startView, structured, withoutStackedMarks, type Arguments, type CallToolResult } from './kit.js';

/** How long a confirmed call may take (rate-limit waits included) before the card stops waiting. */
const CONFIRM_TIMEOUT_MS = 5 * 60 * 1000;

interface Preview {
  operationId: string;
  statement: string;
  /** The confirmationToken while it may still be sent; removed once sent or discarded. */
  token?: string;
  expiresAt?: string;
  /** Why an earlier token was refused, when this preview replaces it. */
  reason?: string;
}

/**
 * `answer` and `error`: a result whose structuredContent gives no outcome this card knows (a host
 * that passes none, a later server's): shown as the server wrote it, claiming nothing of its own.
 */
type Outcome = { kind: 'done' | 'declined' | 'refused' | 'answer' | 'error'; text: string } | { kind: 'unknown'; text: string; check?: string };

let callArguments: Arguments | undefined;
let shownPreview: Preview | undefined;
/**
 * The person pressed Confirm or Cancel. The card is for one call: what the host sends after that
 * (the same input and result again, on a re-render or a replay) is not drawn, or a done or
 * cancelled card would show its preview again, offering a token that was spent or cancelled.
 */
let acted = false;
/**
 * The host cancelled the call this card is for (the person stopped it, or the host gave up): no
 * preview is offered after that, not even one the host sends later. A Confirm still on screen was a
 * yes the person could give to a call that, to them and the host, had been stopped.
 */
let cancelled = false;
/** A result was drawn (a preview or an outcome). */
let resultShown = false;

const app = startView('confirmation card', {
  onInput(args) {
    if (acted) return;
    // The call as the model made it; a token it carried is not this card's to reuse.
    const { confirmationToken: _ignored, ...rest } = args;
    callArguments = rest;
    // The result came first: draw the card again, now with Confirm enabled.
    if (shownPreview?.token) showPreview(shownPreview);
  },
  onResult(result) {
    if (acted) return;
    const preview = previewOf(result);
    if (preview && cancelled) return;
    resultShown = true;
    if (preview) showPreview(preview);
    else showOutcome(undefined, outcomeOf(result));
  },
  onCancelled(reason) {
    // After a yes or a no the card is the person's: the cancel was of the call that drew it.
    if (acted || cancelled) return;
    cancelled = true;
    const why = reason ? ` (${withoutStackedMarks(reason)})` : '';
    if (shownPreview?.token) {
      shownPreview.token = undefined;
      showOutcome(shownPreview, {
        kind: 'declined',
        text: `Cancelled by the host${why}: ${shownPreview.operationId} was not run, and this card will not run it.`,
      });
      // As for Cancel pressed: the model holds the token too, and the person's stop was a no.
      tellModel(
        `The host cancelled ${shownPreview.operationId} while its confirmation card was shown${why}: it was not run. Its confirmationToken must not be used; if the user wants it, call again without it (a new preview is shown).`,
      );
    } else if (!resultShown) {
      // The call may have been a write that needed no yes, cancelled while the API carried it out.
      showOutcome(undefined, {
        kind: 'unknown',
        text: `The host cancelled this call before its answer came${why}. If it was a write that needs no confirmation, it may have been carried out: check before trying again. This card will not run anything.`,
      });
    }
  },
});

/** A preview the person can say yes to: with its token and the statement of what the yes does (no statement, no Confirm). */
function previewOf(result: CallToolResult): Preview | undefined {
  const data = structured(result);
  if (result.isError || data.outcome !== 'preview' || typeof data.confirmationToken !== 'string') return undefined;
  if (typeof data.preview !== 'string' || data.preview.trim() === '') return undefined;
  const paragraphs = resultText(result).split('\n\n');
  const reason = paragraphs[0] && !paragraphs[0].startsWith('Confirmation needed') ? paragraphs[0] : undefined;
  return {
    operationId: String(data.operationId ?? ''),
    statement: data.preview,
    token: data.confirmationToken,
    expiresAt: typeof data.expiresAt === 'string' ? data.expiresAt : undefined,
    reason,
  };
}

function outcomeOf(result: CallToolResult): Outcome {
  const text = resultText(result);
  const outcome = structured(result).outcome;
  // The server says what it knows in structuredContent.outcome: carried out (even when its answer
  // failed), unknown (it may have been), refused, or declined. Without it, only the words of an
  // unknown outcome are read (the safe side); nothing else is called done or refused.
  if (outcome === 'done') return { kind: 'done', text };
  if (outcome === 'unknown' || (outcome === undefined && result.isError && /outcome is unknown|may already have been carried out/i.test(text)))
    return { kind: 'unknown', text, check: checkWith(text) };
  if (outcome === 'refused' && result.isError) return { kind: 'refused', text };
  if (outcome === 'declined' && !result.isError) return { kind: 'declined', text };
  return { kind: result.isError ? 'error' : 'answer', text };
}

/**
 * The read the server names to check an unknown outcome with. Its own "check with X" ends its
 * text: the API's message, which it may quote before that, could name any read (or a write).
 */
function checkWith(text: string): string | undefined {
  return [...withoutQuoted(text).matchAll(/check with ([a-z]+(?:\.[\w]+)+)/gi)].at(-1)?.[1];
}

/**
 * `text` with what it quotes (“…”: the API's message, a customer's name; its own quotes escaped by
 * the server) left out, and the rest of an unclosed quote: where the server names no read of its
 * own ("check the current state"), the API's message saying "check with campaign.delete" was the
 * card's advice, in bold, under "Outcome unknown".
 */
function withoutQuoted(text: string): string {
  let kept = '';
  for (let at = 0; at < text.length; at++) {
    if (text[at] === '\\') {
      kept += text.slice(at, at + 2);
      at += 1;
    } else if (text[at] !== '“') {
      kept += text[at];
    } else {
      let end = at + 1;
      while (end < text.length && text[end] !== '”') end += text[end] === '\\' ? 2 : 1;
      kept += '“”';
      at = end;
    }
  }
  return kept;
}

/** The statement as the server wrote it: effect lines, "- " facts, then what cannot be undone. */
function statementNodes(statement: string): Node[] {
  const effect: string[] = [];
  const facts: string[] = [];
  let irreversible: string | undefined;
  for (const line of statement.split('\n')) {
    if (line.startsWith('- ')) facts.push(line.slice(2));
    else if (line.startsWith('This cannot be undone: ')) irreversible = line.slice('This cannot be undone: '.length);
    else effect.push(line);
  }
  const nodes: Node[] = [el('p', { class: 'statement' }, isolatedQuotes(effect.join('\n')))];
  if (facts.length > 0)
    nodes.push(
      el(
        'ul',
        { class: 'facts' },
        facts.map((fact) => el('li', {}, isolatedQuotes(fact))),
      ),
    );
  if (irreversible) nodes.push(el('div', { class: 'notice notice-warning' }, [el('strong', { text: 'This cannot be undone' }), capitalize(irreversible)]));
  return nodes;
}

/** Quotes whose text is isolated, each with its closing mark: the server's “…”, and the "…" of a JSON string. */
const QUOTE_PAIRS: Record<string, string> = { '“': '”', '"': '"' };

/**
 * The statement's text with each quoted text (“…”: a name or message, its own quotes and
 * backslashes escaped by the server; "…": a string of the JSON of fields sent as given) in a
 * <bdi>: right-to-left letters in it are ordered on their own and cannot move what is around them
 * (a customer named `שלום 12 (6289999)` would otherwise draw the ticket's real number inside the
 * quotes, and the made-up one where the number goes; `tags = ["שלום",12]` was drawn [12,"שלום"]).
 * Each is drawn on a ground of its own (.quoted): a name holding a mark that looks like its closing
 * quote (`Promo" … 1 recipient(s) … "x`) is still seen to go on to its real end.
 */
function isolatedQuotes(text: string): Array<Node | string> {
  const parts: Array<Node | string> = [];
  let plain = '';
  for (let at = 0; at < text.length; at++) {
    if (text[at] === '\\') {
      // An escape outside quotes (`\“` in JSON of the API's data) is kept whole: an escaped “ opens nothing.
      plain += text.slice(at, at + 2);
      at += 1;
      continue;
    }
    const close = QUOTE_PAIRS[text[at] as string];
    if (!close) {
      plain += text[at];
      continue;
    }
    let end = at + 1;
    while (end < text.length && text[end] !== close) end += text[end] === '\\' ? 2 : 1;
    if (end >= text.length && close === '"') {
      // A lone " (an inch, our own words) opens nothing: a quote after it is still isolated.
      plain += '"';
      continue;
    }
    if (end >= text.length) {
      plain += text.slice(at);
      break;
    }
    parts.push(`${plain}${text[at]}`, el('bdi', { class: 'quoted', text: text.slice(at + 1, end) }));
    plain = close;
    at = end;
  }
  if (plain) parts.push(plain);
  return parts;
}

function heading(operationId: string): HTMLElement {
  return el('h1', {}, ['Confirm ', el('span', { class: 'mono', text: operationId || 'this operation' })]);
}

/** `refused`: this preview replaces one whose token the server refused after the person pressed Confirm. */
function showPreview(preview: Preview, refused = false): void {
  // The line of the preview drawn before (a refused token's) is checked no more.
  stopExpiryChecks();
  shownPreview = preview;
  const status = el('p', { class: 'muted', attrs: { role: 'status', 'aria-live': 'polite' } });
  const confirm = el('button', { class: 'primary', text: 'Confirm', attrs: { type: 'button' } });
  const cancel = el('button', { text: 'Cancel', attrs: { type: 'button' } });
  if (!callArguments) {
    confirm.disabled = true;
    status.textContent = 'Waiting for the details of the call…';
  }
  const held = refused ? holdConfirm(confirm, status) : () => false;

  confirm.addEventListener('click', (event) => {
    // The second click of a double click (detail 2; 0 from the keyboard) is no yes: after a refused
    // token the new preview's Confirm is drawn where the pressed one was, and the second click of a
    // double click on the first landed on it, a yes to a statement no one had read.
    if (event.detail > 1) {
      // Said, not dropped silently: the first click may have done nothing (next to the button, on
      // Confirm while it waited), and this second one was the person's yes.
      if (preview.token && callArguments)
        status.textContent = 'That click was counted as the second of a double click, which is not taken as a yes: to confirm, click Confirm once.';
      return;
    }
    // One click, one call: whatever happens next, this token is not sent again.
    const token = preview.token;
    if (!token || !callArguments) return;
    if (held()) {
      status.textContent = HELD_TEXT;
      return;
    }
    acted = true;
    preview.token = undefined;
    confirm.disabled = cancel.disabled = true;
    status.textContent = 'Sending…';
    void runConfirmed(preview, token, status);
  });
  cancel.addEventListener('click', () => {
    if (!preview.token) return;
    acted = true;
    preview.token = undefined;
    confirm.disabled = cancel.disabled = true;
    status.textContent = '';
    showOutcome(preview, { kind: 'declined', text: `Cancelled: ${preview.operationId} was not run, and nothing was sent.` });
    tellModel(`The user pressed Cancel on the confirmation card: ${preview.operationId} was not run. Its confirmationToken must not be used.`);
  });

  // After a refused token the button pressed is gone: the reason is announced and takes keyboard focus.
  const reason = preview.reason
    ? el('p', { class: 'notice notice-warning', text: withoutStackedMarks(preview.reason), attrs: refused ? { role: 'alert', tabindex: '-1' } : {} })
    : undefined;
  render(
    el('section', { attrs: { 'aria-labelledby': 'card-title' } }, [
      withId(heading(preview.operationId), 'card-title'),
      reason,
      el('p', { class: 'muted', text: 'Nothing has been done yet.' }),
      ...statementNodes(preview.statement),
      preview.expiresAt ? expiryLine(preview.expiresAt) : undefined,
      el('div', { class: 'actions' }, [confirm, cancel]),
      status,
    ]),
  );
  if (refused) reason?.focus();
}

/**
 * How long the Confirm of a preview drawn after a refused token cannot be pressed. It is drawn where
 * the pressed one was, under the pointer, within a fraction of a second: the second of two slow
 * clicks (each counted as a click of its own) was a yes to the new statement, unread. Browsers hold
 * the buttons of their own security prompts so, for the same reason.
 */
const REFUSED_HOLD_MS = 1_500;

const HELD_TEXT = 'Read the new statement first: Confirm can be pressed in a moment.';

/**
 * Holds `confirm` for REFUSED_HOLD_MS; returns whether it is still held. It stays focusable (Tab
 * from the server's reason reaches it, and a press is answered with HELD_TEXT rather than sent).
 */
function holdConfirm(confirm: HTMLButtonElement, status: HTMLElement): () => boolean {
  let held = true;
  confirm.setAttribute('aria-disabled', 'true');
  setTimeout(() => {
    held = false;
    confirm.removeAttribute('aria-disabled');
    if (status.textContent === HELD_TEXT) status.textContent = '';
  }, REFUSED_HOLD_MS);
  return () => held;
}

async function runConfirmed(preview: Preview, confirmationToken: string, status: HTMLElement): Promise<void> {
  const name = hostToolName(app) ?? `${preview.operationId.split('.')[0]}_action`;
  let result: CallToolResult;
  try {
    result = (await app.callServerTool({ name, arguments: { ...callArguments, confirmationToken } }, { timeout: CONFIRM_TIMEOUT_MS })) as CallToolResult;
  } catch (error) {
    status.textContent = '';
    const why = error instanceof Error ? error.message : String(error);
    const text = `No answer came back (${why}). ${preview.operationId} may or may not have been carried out; check before trying again.`;
    showOutcome(preview, { kind: 'unknown', text });
    // The model must not take the card as still waiting for a yes (and ask again, or use its token).
    tellModel(
      `The user confirmed ${preview.operationId} on the confirmation card, and it was called with the card's token, but no answer came back (${why}): it may or may not have been carried out. Check before trying again.`,
    );
    return;
  }
  status.textContent = '';
  const fresh = previewOf(result);
  if (fresh) {
    // The token was refused (expired, spent); nothing ran. A new yes is needed for the new token.
    showPreview(fresh, true);
    return;
  }
  const outcome = outcomeOf(result);
  showOutcome(preview, outcome);
  tellModel(`The user confirmed ${preview.operationId} on the confirmation card, and it was called with the card's token. The answer: ${outcome.text}`);
}

const OUTCOME_LOOK = {
  done: { title: 'Done', style: 'notice-success' },
  declined: { title: 'Not run', style: 'notice-warning' },
  refused: { title: 'Refused: nothing was done', style: 'notice-danger' },
  unknown: { title: 'Outcome unknown', style: 'notice-warning' },
  answer: { title: 'The server answered', style: 'notice-warning' },
  error: { title: 'Error', style: 'notice-danger' },
} as const;

/** The outcome, below the statement it belongs to (when there is one). */
function showOutcome(preview: Preview | undefined, outcome: Outcome): void {
  stopExpiryChecks();
  const look = OUTCOME_LOOK[outcome.kind];
  // A done answer is "Done: … was carried out." and then the API's data, which is folded away.
  // Either may quote the API's text: combining marks past 4 in a row are shown as escapes.
  const text = withoutStackedMarks(outcome.text);
  const [first = '', ...rest] = outcome.kind === 'done' ? text.split('\n') : [text];
  const box = el('div', { class: `notice ${look.style}`, attrs: { role: outcome.kind === 'done' ? 'status' : 'alert' } }, [
    el('strong', { text: look.title }),
    outcome.kind === 'unknown' && outcome.check ? el('span', { text: `Check with ${outcome.check} before trying again.\n` }) : undefined,
    first,
    rest.length > 0
      ? el('details', {}, [el('summary', { text: 'What the API answered' }), el('p', { class: 'statement mono' }, isolatedQuotes(rest.join('\n')))])
      : undefined,
  ]);
  if (preview) {
    render(
      el('section', { attrs: { 'aria-labelledby': 'card-title' } }, [
        withId(heading(preview.operationId), 'card-title'),
        ...statementNodes(preview.statement),
        box,
      ]),
    );
    // The buttons the person used are gone: keyboard focus goes to what came of it.
    box.tabIndex = -1;
    box.focus();
  } else {
    render(el('section', {}, [box]));
  }
}

/** Lets the model know what the person decided, when the host takes context updates. */
function tellModel(text: string): void {
  if (!app.getHostCapabilities()?.updateModelContext) return;
  app.updateModelContext({ content: [{ type: 'text', text }] }).catch(() => undefined);
}

/** Turns the shown expiry to "expired" when its moment passes; cleared when the card is drawn again. */
let expiryTimer: ReturnType<typeof setTimeout> | undefined;
/** Checks the shown expiry line again now (when the view is shown again); unset once the card shows no expiry. */
let checkExpiry: (() => void) | undefined;
/**
 * The longest wait between two checks of the expiry line. A page's timers run on a clock that stops
 * while the device sleeps (Date.now() does not): one timer set for the expiry moment, on a laptop
 * closed and opened an hour later, still had its minutes to run, and the line said one could
 * confirm until a time long gone. Short waits also keep clear of setTimeout's range (2^31 ms).
 */
const EXPIRY_CHECK_MS = 30_000;

document.addEventListener('visibilitychange', () => checkExpiry?.());

/**
 * The line saying until when the token works, kept true while the card is on screen: it said "You
 * can confirm until 20:19" at 20:25 to a person who had left the card open, as if a yes still could.
 * None for an expiry this card cannot read ("You can confirm until garbage" is no time).
 */
function expiryLine(expiresAt: string): HTMLElement | undefined {
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at)) return undefined;
  const line = el('p', { class: 'muted' });
  const check = () => {
    clearTimeout(expiryTimer);
    line.textContent = expiry(expiresAt);
    const left = at - Date.now();
    if (left > 0) expiryTimer = setTimeout(check, Math.min(left + 1, EXPIRY_CHECK_MS));
  };
  check();
  checkExpiry = check;
  return line;
}

function stopExpiryChecks(): void {
  clearTimeout(expiryTimer);
  checkExpiry = undefined;
}

/**
 * Until when the token works, with the day when it is not today; or that it has expired (by this
 * device's clock: the server decides), as on a card a host draws again from an old conversation,
 * which said "You can confirm until" yesterday's time of day.
 */
function expiry(expiresAt: string): string {
  const at = Date.parse(expiresAt);
  if (!Number.isNaN(at) && at <= Date.now()) return `This confirmation expired at ${formatMoment(expiresAt)}.`;
  return `You can confirm until ${formatMoment(expiresAt)}.`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function withId<T extends HTMLElement>(node: T, id: string): T {
  node.id = id;
  return node;
}
