// Text from the API is data, often written by end customers. Characters a reader cannot see
// (zero-width, direction controls, Unicode tags, variation selectors used to smuggle text) are
// removed before the model sees it, so what the model reads is what a person would read.

// Cf: format characters (zero-width, bidi controls, tags U+E0000–E007F, soft hyphen, BOM);
// Cc: controls other than tab and newline; variation selectors; private use is left alone.
const HIDDEN = /[\p{Cf}\u0000-\u0008\u000B-\u001F\u007F-\u009F\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u2028\u2029]/gu;

export function cleanText(text: string): string {
  return text.replace(HIDDEN, '');
}

/** A deep copy of parsed JSON with every string (and key) cleaned. */
export function cleanData(value: unknown): unknown {
  if (typeof value === 'string') return cleanText(value);
  if (Array.isArray(value)) return value.map(cleanData);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    // defineProperty, not assignment: a "__proto__" key from JSON stays a plain field.
    for (const [key, inner] of Object.entries(value)) {
      Object.defineProperty(out, cleanText(key), { value: cleanData(inner), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}
