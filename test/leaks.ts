// Finds an API key in text, in any of the forms a hostile API could return it: as it is, in any
// letter case, URL-encoded (some or every character), \xNN or \u00NN escaped, hex (with or without
// separators), base64 or base64url (the key at any of the three byte alignments inside a larger
// blob), base32, ROT13, reversed, spaced out, in full-width or other compatibility letters, with
// combining marks, split by invisible characters, or cut so that only a fragment is left: a
// fragment of the key's secret part, as the prefix (`eng_live_`) is no secret.
// Written apart from the server's redactor, so that it checks it.

/**
 * Any run of this many characters of a form of the key's secret part counts as a leak (the server
 * redacts 16 and more, and drops the last 15 characters of a cut text).
 */
const FRAGMENT = 16;

/** What of a key is secret: without a public prefix of words and separators (`eng_live_`), as anyone could write that. */
function secretPart(key: string): string {
  const prefix = /^(?:[a-z]{2,8}_){1,3}/.exec(key)?.[0] ?? '';
  return key.length - prefix.length >= 8 ? key.slice(prefix.length) : key;
}

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
  for (let shift = 0; shift < 5; shift++) {
    // Base32: 5 bits a character; those that mix in the bytes around the key are left out.
    const encoded = base32(Buffer.concat([Buffer.from('vwxyz'.slice(0, shift)), bytes]));
    out.push({ name: `base32 (shift ${shift})`, text: encoded.slice(Math.ceil((8 * shift) / 5), Math.floor((8 * (shift + bytes.length)) / 5)) });
  }
  out.push({ name: 'ROT13', text: rot13(key) }, { name: 'reversed', text: [...key].reverse().join('') });
  return out.map((form) => ({ ...form, text: form.text.toLowerCase() }));
}

function base32(bytes: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const byte of bytes) bits += byte.toString(2).padStart(8, '0');
  let out = '';
  for (let at = 0; at < bits.length; at += 5) out += alphabet[parseInt(bits.slice(at, at + 5).padEnd(5, '0'), 2)];
  return out;
}

function rot13(text: string): string {
  return text.replace(/[a-z]/gi, (char) => {
    const base = char <= 'Z' ? 65 : 97;
    return String.fromCharCode(((char.charCodeAt(0) - base + 13) % 26) + base);
  });
}

/**
 * How the scanned text is read: compatibility letters folded and combining marks dropped (NFKD),
 * invisible characters gone, %XX, \xNN and \u00NN decoded, lowercase; and twice more, with the
 * separators between hex pairs removed, and with every blank removed.
 */
function normalize(text: string): string[] {
  const plain = text
    .normalize('NFKD')
    .replace(/[\p{M}\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}]/gu, '')
    .replace(/(?:%|\\x|\\u00)([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .toLowerCase();
  return [plain, plain.replace(/(?:0x)?([0-9a-f]{2})(?:, |[\s:,._/|-])(?=(?:0x)?[0-9a-f]{2})/g, '$1'), plain.replace(/\s+/g, '')];
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
      for (const form of forms(secretPart(key))) {
        for (let at = 0; at + FRAGMENT <= form.text.length; at++)
          windows.set(form.text.slice(at, at + FRAGMENT), `${form.name} of ${key.slice(0, 9)}… (characters ${at}–${at + FRAGMENT})`);
      }
    }
  };
  add(...initial);
  return {
    add,
    find(text) {
      for (const plain of normalize(text)) {
        for (let at = 0; at + FRAGMENT <= plain.length; at++) {
          const hit = windows.get(plain.slice(at, at + FRAGMENT));
          if (hit) return `${hit} at ${at}: …${plain.slice(Math.max(0, at - 20), at + 30)}…`;
        }
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
    'full-width letters': [...key].map((char) => (char > ' ' && char <= '~' ? String.fromCharCode(char.charCodeAt(0) + 0xfee0) : char)).join(''),
    'mathematical bold letters and digits': [...key].map(mathBold).join(''),
    'a combining mark after each character': [...key].map((char) => `${char}\u0301`).join(''),
    'accented letters (the marks composed)': [...key].map((char) => `${char}\u0308`.normalize('NFC')).join(''),
    'hex with colons': Buffer.from(key).toString('hex').toUpperCase().match(/../g)!.join(':'),
    'hex as 0xNN, comma separated': Buffer.from(key)
      .toString('hex')
      .match(/../g)!
      .map((pair) => `0x${pair}`)
      .join(', '),
    'hex with spaces': Buffer.from(key).toString('hex').match(/../g)!.join(' '),
    '\\xNN escapes': [...Buffer.from(key)].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join(''),
    '\\u00NN escapes': [...key].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    base32: base32(Buffer.from(key)),
    'base32 inside a blob, lower case': base32(Buffer.from(`{"k":"${key}"}`)).toLowerCase(),
    ROT13: rot13(key),
    reversed: [...key].reverse().join(''),
    'spaced out': [...key].join(' '),
  };
}

function mathBold(char: string): string {
  const code = char.charCodeAt(0);
  if (code >= 0x61 && code <= 0x7a) return String.fromCodePoint(0x1d41a + code - 0x61);
  if (code >= 0x41 && code <= 0x5a) return String.fromCodePoint(0x1d400 + code - 0x41);
  if (code >= 0x30 && code <= 0x39) return String.fromCodePoint(0x1d7ce + code - 0x30);
  return char;
}
