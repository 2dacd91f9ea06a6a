// Finds an API key in text, in any of the forms a hostile API could return it: as it is, in any
// letter case, URL-encoded (some or every character), hex, base64 or base64url (the key at any of
// the three byte alignments inside a larger blob), split by invisible characters, or cut so that
// only a fragment is left. Written apart from the server's redactor, so that it checks it.

/** Any run of this many characters of a form counts as a leak (the server redacts 12 and more, and 8 at a cut). */
const FRAGMENT = 10;

function forms(key: string): Array<{ name: string; text: string }> {
  const bytes = Buffer.from(key);
  const out = [
    { name: 'the key', text: key },
    { name: 'hex', text: bytes.toString('hex') },
  ];
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.from('xyz'.slice(0, shift)), bytes]);
    // Characters that mix in the bytes around the key are left out.
    const start = [0, 2, 3][shift] as number;
    const end = Math.floor(padded.length / 3) * 4;
    out.push({ name: `base64 (shift ${shift})`, text: padded.toString('base64').slice(start, end) });
    out.push({ name: `base64url (shift ${shift})`, text: padded.toString('base64url').slice(start, end) });
  }
  return out.map((form) => ({ ...form, text: form.text.toLowerCase() }));
}

/** How the scanned text is read: invisible characters gone, %XX decoded, lowercase. */
function normalize(text: string): string {
  return text
    .replace(/[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}]/gu, '')
    .replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .toLowerCase();
}

export interface KeyScanner {
  /** A description of the first leak found in `text`, or undefined. */
  find(text: string): string | undefined;
  /** Adds keys to look for. */
  add(...keys: string[]): void;
}

export function keyScanner(...initial: string[]): KeyScanner {
  const windows = new Map<string, string>();
  const add = (...keys: string[]) => {
    for (const key of keys) {
      for (const form of forms(key)) {
        for (let at = 0; at + FRAGMENT <= form.text.length; at++)
          windows.set(form.text.slice(at, at + FRAGMENT), `${form.name} of ${key.slice(0, 9)}… (characters ${at}–${at + FRAGMENT})`);
      }
    }
  };
  add(...initial);
  return {
    add,
    find(text) {
      const plain = normalize(text);
      for (let at = 0; at + FRAGMENT <= plain.length; at++) {
        const hit = windows.get(plain.slice(at, at + FRAGMENT));
        if (hit) return `${hit} at ${at}: …${plain.slice(Math.max(0, at - 20), at + 30)}…`;
      }
      return undefined;
    },
  };
}

/** Every form of the key, as a hostile API could send it. */
export function keyVariants(key: string): Record<string, string> {
  const b64 = (text: string, encoding: 'base64' | 'base64url') => Buffer.from(text).toString(encoding);
  return {
    verbatim: key,
    lowercase: key.toLowerCase(),
    uppercase: key.toUpperCase(),
    'base64, aligned': b64(key, 'base64'),
    'base64 after one byte': b64(`a${key}`, 'base64'),
    'base64url after two bytes': b64(`ab${key}!`, 'base64url'),
    'base64 inside a blob': b64(`{"token":"${key}","x":1}`, 'base64'),
    'URL-encoded underscores': key.replace(/_/g, '%5F'),
    'every character %XX': [...key].map((char) => `%${char.charCodeAt(0).toString(16)}`).join(''),
    hex: Buffer.from(key).toString('hex').toUpperCase(),
    'split by zero-width spaces': [...key].join('\u200b'),
    'split by invisible separators and tags': [...key].map((char, index) => (index % 3 === 0 ? `${char}\u2063\u{E0020}` : char)).join(''),
    'split by a Hangul filler': `${key.slice(0, 20)}\u3164${key.slice(20)}`,
  };
}
