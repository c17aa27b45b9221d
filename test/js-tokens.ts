// A small tokenizer for TypeScript/JavaScript source, enough to find literal argv arrays:
// strings, template literals, regex literals and comments are told apart (a regex such as
// /'([^']*)'/ or a URL in a string must not be read as a quote or a comment). No parser: the
// lab-requirements test needs tokens, not types, and stays independent of the compiler's API.

export interface Token {
  kind: 'string' | 'template' | 'regex' | 'name' | 'number' | 'punct';
  /** A string's value; a template's text with every `${...}` replaced by `${}`; the source text otherwise. */
  text: string;
  /** A template with substitutions. */
  dynamic?: boolean;
  line: number;
}

const NAME = /[A-Za-z0-9_$]/;
// after these a `/` starts a regex literal, not a division
const BEFORE_REGEX_PUNCT = new Set([
  '(',
  ',',
  '=',
  ':',
  '[',
  '!',
  '&',
  '|',
  '?',
  '{',
  '}',
  ';',
  '+',
  '-',
  '*',
  '%',
  '<',
  '>',
  '~',
  '^',
  '=>',
  '&&',
  '||',
  '??',
  '===',
  '==',
  '!==',
  '!=',
]);
const BEFORE_REGEX_WORDS = new Set([
  'return',
  'typeof',
  'case',
  'do',
  'else',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'await',
  'yield',
]);
const PUNCT = ['...', '===', '!==', '=>', '&&', '||', '??', '?.', '==', '!='];

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  const count = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (source[k] === '\n') line++;
  };

  /** Reads a template literal starting at the backtick `start`; returns its end (after the closing backtick). */
  const readTemplate = (start: number): { end: number; text: string; dynamic: boolean } => {
    let k = start + 1;
    let text = '';
    let dynamic = false;
    while (k < source.length && source[k] !== '`') {
      if (source[k] === '\\') {
        text += source.slice(k, k + 2);
        k += 2;
      } else if (source[k] === '$' && source[k + 1] === '{') {
        dynamic = true;
        text += '${}';
        k = skipCode(k + 2);
      } else text += source[k++];
    }
    return { end: k + 1, text, dynamic };
  };

  /** Skips code inside `${...}` up to and including the matching `}`. */
  const skipCode = (start: number): number => {
    let depth = 1;
    let k = start;
    while (k < source.length && depth > 0) {
      const c = source[k]!;
      if (c === '{') depth++;
      else if (c === '}') depth--;
      else if (c === '"' || c === "'") k = skipString(k) - 1;
      else if (c === '`') k = readTemplate(k).end - 1;
      k++;
    }
    return k;
  };

  const skipString = (start: number): number => {
    const quote = source[start];
    let k = start + 1;
    while (k < source.length && source[k] !== quote && source[k] !== '\n') k += source[k] === '\\' ? 2 : 1;
    return k + 1;
  };

  const regexAllowed = () => {
    const last = tokens.at(-1);
    if (!last) return true;
    if (last.kind === 'punct') return BEFORE_REGEX_PUNCT.has(last.text);
    return last.kind === 'name' && BEFORE_REGEX_WORDS.has(last.text);
  };

  while (i < source.length) {
    const c = source[i]!;
    const start = i;
    if (c === '\n') {
      line++;
      i++;
    } else if (/\s/.test(c)) i++;
    else if (c === '/' && source[i + 1] === '/') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? source.length : end + 2;
      count(start, i);
    } else if (c === '#' && i === 0 && source[1] === '!') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (c === '"' || c === "'") {
      i = skipString(i);
      tokens.push({ kind: 'string', text: unescapeString(source.slice(start + 1, i - 1)), line });
    } else if (c === '`') {
      const t = readTemplate(i);
      i = t.end;
      tokens.push({ kind: 'template', text: t.text, dynamic: t.dynamic, line });
      count(start, i);
    } else if (c === '/' && regexAllowed()) {
      let k = i + 1;
      let inClass = false;
      while (k < source.length && source[k] !== '\n') {
        if (source[k] === '\\') k++;
        else if (source[k] === '[') inClass = true;
        else if (source[k] === ']') inClass = false;
        else if (source[k] === '/' && !inClass) break;
        k++;
      }
      k++;
      while (k < source.length && /[a-z]/.test(source[k]!)) k++;
      i = k;
      tokens.push({ kind: 'regex', text: source.slice(start, i), line });
    } else if (NAME.test(c)) {
      while (i < source.length && NAME.test(source[i]!)) i++;
      const text = source.slice(start, i);
      tokens.push({ kind: /^[0-9]/.test(text) ? 'number' : 'name', text, line });
    } else {
      const p = PUNCT.find((q) => source.startsWith(q, i)) ?? c;
      i += p.length;
      tokens.push({ kind: 'punct', text: p, line });
    }
  }
  return tokens;
}

function unescapeString(raw: string): string {
  return raw.replace(/\\(.)/g, (_, ch: string) => ({ n: '\n', t: '\t' })[ch] ?? ch);
}
