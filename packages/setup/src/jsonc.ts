// Comments and trailing commas, for the hosts whose own reader takes them: VS Code reads mcp.json
// with its JSONC parser (comments, and trailing commas allowed), Gemini CLI its settings.json with
// comments stripped (strip-json-comments, trailing commas left, so JSON.parse refuses them). Each
// is blanked to spaces, line breaks kept, so the text keeps its length and every offset: it is
// parsed and scanned as plain JSON, and setup's edits, made at those offsets, go into the text as
// the person wrote it, comments and all.
import type { Host } from './hosts.js';

/** `text` with each comment (and, `trailingCommas`, each comma before a closing bracket) made spaces. An unclosed one stays, for JSON.parse to refuse. */
export function blankComments(text: string, trailingCommas: boolean): string {
  const uncommented = blank(text, commentSpans(text));
  return trailingCommas ? blank(uncommented, trailingCommaSpans(uncommented)) : uncommented;
}

/** The text as JSON.parse is to read it for this host: as it is, for a host that reads plain JSON. */
export const readableJson = (host: Host, text: string): string => (host.jsonc ? blankComments(text, host.jsonc.trailingCommas) : text);

/** JSON.parse of the config's text as its host reads it; comments alone read as an empty object. */
export function parseHostJson(host: Host, text: string): unknown {
  const readable = readableJson(host, text);
  return /^[ \t\r\n]*$/.test(readable) ? {} : JSON.parse(readable);
}

type Spans = [start: number, end: number][];

/** Past the string opening at `start`: its closing quote, or the line's end for one left open (JSON.parse refuses it). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const char = text[i];
    if (char === '\\') i++;
    else if (char === '"') return i + 1;
    else if (char === '\n' || char === '\r') return i;
  }
  return text.length;
}

function commentSpans(text: string): Spans {
  const spans: Spans = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') i = stringEnd(text, i) - 1;
    else if (char === '/' && text[i + 1] === '/') {
      let end = i + 2;
      while (end < text.length && text[end] !== '\n' && text[end] !== '\r') end++;
      spans.push([i, end]);
      i = end - 1;
    } else if (char === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      if (close < 0) return spans;
      spans.push([i, close + 2]);
      i = close + 1;
    }
  }
  return spans;
}

/** Commas with nothing but whitespace before a closing bracket (comments blanked already). */
function trailingCommaSpans(text: string): Spans {
  const spans: Spans = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') i = stringEnd(text, i) - 1;
    else if (char === ',') {
      let next = i + 1;
      while (text[next] === ' ' || text[next] === '\t' || text[next] === '\n' || text[next] === '\r') next++;
      if (text[next] === '}' || text[next] === ']') spans.push([i, i + 1]);
    }
  }
  return spans;
}

function blank(text: string, spans: Spans): string {
  if (spans.length === 0) return text;
  let result = '';
  let at = 0;
  for (const [start, end] of spans) {
    result += text.slice(at, start) + text.slice(start, end).replace(/[^\r\n]/g, ' ');
    at = end;
  }
  return result + text.slice(at);
}
