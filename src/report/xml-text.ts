// Text for XML and HTML documents written by hand: escaped content and attribute lists.

// characters XML 1.0 cannot carry at all (control bytes from captures) become U+FFFD
// biome-ignore lint/suspicious/noControlCharactersInRegex: XML 1.0 forbids these characters, so they are replaced
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

export const xml = (s: string) =>
  s
    .replace(NOT_XML, '\ufffd')
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);

/** ` name="value"` for each attribute that has a value, in order. */
export const attrs = (a: Record<string, string | number | undefined>) =>
  Object.entries(a)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xml(String(v))}"`)
    .join('');
