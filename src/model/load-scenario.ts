// Reads a scenario file and validates it, turning every problem into file:line:column + field.
import { readFile, stat } from 'node:fs/promises';
import { LineCounter, parseDocument, isMap, isNode, isSeq, type Document, type Node as YamlNode } from 'yaml';
import { z } from 'zod';
import { ScenarioValidationError, type ValidationIssue } from './errors.ts';
import { ScenarioSchema, Topology, type Scenario, type TopologySpec } from './scenario-schema.ts';
import { nearest } from './nearest.ts';
import { checkFalsifiable } from './falsifiable.ts';
import { checkReferences, type ReferenceIssue } from './scenario-references.ts';
import { cachedScenario } from './scenario-cache.ts';
import { withCapturedFiles } from './captured-files.ts';

/** A scenario is a page of YAML; anything larger is a mistake (an import with a large captured state says so). */
export const MAX_BYTES = 256 * 1024;
/** Far deeper than any scenario; refused before parsing, so a pathological file cannot exhaust the parser's stack. */
const MAX_DEPTH = 64;

/** Where flow nesting ([ and {) or indentation first goes deeper than MAX_DEPTH, as a 0-based offset. */
export function tooDeep(text: string): number | undefined {
  let depth = 0;
  let quote: string | undefined;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') {
      lineStart = i + 1;
      quote = undefined;
      continue;
    }
    if (i === lineStart) {
      let indent = 0;
      while (text[i + indent] === ' ') indent++;
      if (indent > MAX_DEPTH * 4) return i;
    }
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === lineStart || /\s/.test(text[i - 1] ?? ''))) {
      const end = text.indexOf('\n', i);
      i = (end === -1 ? text.length : end) - 1;
    } else if (c === '[' || c === '{') {
      if (++depth > MAX_DEPTH) return i;
    } else if (c === ']' || c === '}') depth = Math.max(0, depth - 1);
  }
  return undefined;
}

export interface LoadedScenario {
  file: string;
  scenario: Scenario;
}

/** `cached: false` (what `validate` asks): parse and validate now, whatever an earlier run kept. */
export async function loadScenarioFile(
  file: string,
  { cached = true }: { cached?: boolean } = {},
): Promise<LoadedScenario> {
  const buffer = await readScenarioBytes(file);
  const scenario = cached
    ? await cachedScenario(buffer, () => parseScenario(buffer, file))
    : parseScenario(buffer, file);
  // a replay's state directories are read each time (the cache keys the file's bytes, not theirs)
  return { file, scenario: await withCapturedFiles(scenario, file, () => lineFinder(buffer.toString('utf8'))) };
}

/** A file's topology, whatever else it holds or lacks (`render` needs no probes, fault or fixes). */
export async function loadTopologyFile(file: string): Promise<{ id: string; topology: TopologySpec }> {
  const buffer = await readScenarioBytes(file);
  const { data, doc, position } = parseValidated(
    z.object({ id: z.string().optional(), topology: Topology }).loose(),
    buffer,
    file,
  );
  const bare = {
    id: 't',
    title: 't',
    purpose: 'reproduce',
    sources: [],
    topology: data.topology,
    probes: [],
    baseline: { expect: {}, checks: [] },
    fault: { steps: [], expect: {}, checks: [] },
    fixes: [],
    evidence: [],
  } as Scenario;
  const refs = checkReferences(bare);
  if (refs.length > 0) throw referenceError(refs, file, doc, position);
  const { topology } = await withCapturedFiles(data, file, () => lineFinder(buffer.toString('utf8')));
  return { id: data.id ?? file, topology };
}

async function readScenarioBytes(file: string): Promise<Buffer> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (e) {
    throw unreadable(file, e);
  }
  if (size > MAX_BYTES) {
    throw new ScenarioValidationError([
      {
        file,
        line: 1,
        column: 1,
        field: '',
        message: 'file too large for a scenario',
        received: `${size} bytes`,
        expected: `at most ${MAX_BYTES} bytes`,
      },
    ]);
  }
  return readFile(file).catch((e: unknown) => {
    throw unreadable(file, e);
  });
}

/** A file that cannot be read: the path, the system's reason, and what to do about that reason. */
function unreadable(file: string, e: unknown): ScenarioValidationError {
  const code = (e as NodeJS.ErrnoException).code;
  const reason: Record<string, [string, string]> = {
    ENOENT: [
      'no such file',
      'check the path (relative to the current directory); a scenario id needs no .yaml: `netrepro list` shows the ids',
    ],
    EACCES: ['permission denied', `make the file readable: chmod a+r ${file}`],
    EISDIR: ['a directory, not a scenario file', `name the files in it: ${file.replace(/\/$/, '')}/*.yaml`],
    ENOTDIR: ['a part of the path is not a directory', 'check the path'],
  };
  const [message, hint] = reason[code ?? ''] ?? [
    `cannot read the file: ${(e as Error).message}`,
    'check that the file exists and is readable',
  ];
  return new ScenarioValidationError(
    [{ file, line: 0, column: 0, field: '', message: `cannot read: ${message}` }],
    hint,
  );
}

export function parseScenario(source: Buffer | string, file: string): Scenario {
  const { data, doc, position } = parseValidated(ScenarioSchema, source, file);
  // references first: the falsifiability rules read probes and checks by the names they resolve
  const refs = checkReferences(data);
  if (refs.length === 0) refs.push(...checkFalsifiable(data));
  if (refs.length > 0) throw referenceError(refs, file, doc, position);
  return data;
}

/** YAML text -> data valid against `schema`, every problem reported as file:line:column + field. */
export function parseValidated<S extends z.ZodType>(
  schema: S,
  source: Buffer | string,
  file: string,
): { data: z.output<S>; doc: Document; position: Position } {
  const at = (message: string, extra: Partial<ValidationIssue> = {}): never => {
    throw new ScenarioValidationError([{ file, line: 1, column: 1, field: '', message, ...extra }]);
  };
  const lineOf = (text: string, offset: number) => {
    const before = text.slice(0, offset);
    return { line: before.split('\n').length, column: offset - before.lastIndexOf('\n') };
  };
  if (typeof source !== 'string') {
    if (source.includes(0)) at('not a text file (contains NUL bytes)', { expected: 'a UTF-8 YAML document' });
    const text = new TextDecoder('utf-8', { fatal: false }).decode(source);
    if (text.includes('\uFFFD'))
      at('not valid UTF-8', { ...lineOf(text, text.indexOf('\uFFFD')), expected: 'a UTF-8 YAML document' });
    source = text;
  }
  if (source.trim() === '') at('the file is empty', { expected: 'a YAML mapping' });
  const deep = tooDeep(source);
  if (deep !== undefined)
    at(`nested deeper than ${MAX_DEPTH} levels`, { ...lineOf(source, deep), expected: 'a scenario-shaped document' });

  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, merge: true }); // merge: `<<: *anchor` to reuse a check
  const position = (offset: number) => lines.linePos(offset);
  if (doc.errors.length > 0) {
    throw new ScenarioValidationError(
      doc.errors.map((e) => {
        const { line, col } = position(e.pos[0]);
        return { file, line, column: col, field: '', message: `YAML: ${e.message.split('\n')[0]}` };
      }),
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 50 });
  } catch (e) {
    // an alias whose anchor is missing (or a bomb of them): point at the alias itself
    const alias = /alias[^:]*: (\S+)/i.exec((e as Error).message)?.[1];
    const offset = alias ? source.indexOf(`*${alias}`) : -1;
    at(`YAML: ${(e as Error).message}`, offset >= 0 ? lineOf(source, offset) : {});
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    at('the document must be a mapping', {
      received: Array.isArray(data) ? 'a list' : data === null ? 'nothing' : `a ${typeof data}`,
      expected: 'a YAML mapping',
    });
  }

  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    throw new ScenarioValidationError(parsed.error.issues.map((i) => zodIssue(i, doc, position, file, schema)));
  }
  return { data: parsed.data, doc, position };
}

type Position = (offset: number) => { line: number; col: number };

function zodIssue(
  issue: z.core.$ZodIssue,
  doc: Document,
  position: Position,
  file: string,
  schema: z.ZodType,
): ValidationIssue {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // report the branch the author was evidently writing: the one that got deepest into the value
    const depth = (b: z.core.$ZodIssue[]) => Math.max(...b.map((i) => i.path.length));
    const branch = issue.errors.reduce((best, b) => (depth(b) > depth(best) ? b : best));
    const inner = branch[0];
    if (inner)
      return zodIssue(
        { ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue,
        doc,
        position,
        file,
        schema,
      );
  }
  let message = issue.message;
  let expected: string | undefined;
  let received: string | undefined;
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys;
    const where = locateKey(doc, path, keys[0] ?? '', position) ?? locate(doc, path, position);
    const known = knownKeys(schema, path);
    const guesses = known ? keys.map((k) => nearest(k, known)).filter((g): g is string => g !== undefined) : [];
    const guess = guesses.length ? ` (did you mean ${[...new Set(guesses)].join(', ')}?)` : '';
    return {
      file,
      ...where,
      field: fieldName([...path, keys[0] ?? '']),
      message: `unknown key${keys.length > 1 ? 's' : ''} ${keys.join(', ')}${guess}`,
      expected: known ? `one of: ${known.join(', ')}` : undefined,
    };
  }
  if (issue.code === 'invalid_type') {
    expected = issue.expected;
    const value = doc.getIn(path);
    received = value === undefined ? 'nothing (missing)' : describe(value);
    message = value === undefined ? 'required field is missing' : 'wrong type';
  } else if (issue.code === 'invalid_value') {
    expected = `one of: ${issue.values.join(', ')}`;
    received = describe(doc.getIn(path));
    message = 'not an allowed value';
  } else if (
    issue.code === 'invalid_format' ||
    issue.code === 'too_small' ||
    issue.code === 'too_big' ||
    issue.code === 'custom'
  ) {
    received = describe(doc.getIn(path));
  }
  return { file, ...locate(doc, path, position), field: fieldName(path), message, received, expected };
}

/** Problems found after parsing (references, falsifiability), each placed at its node's file:line:column. */
function referenceError(
  refs: ReferenceIssue[],
  file: string,
  doc: Document,
  position: Position,
): ScenarioValidationError {
  return new ScenarioValidationError(
    refs.map((r) => ({
      file,
      ...locate(doc, r.path, position),
      field: fieldName(r.path),
      message: r.message,
      received: r.received,
      expected: r.expected,
    })),
  );
}

/** The line of the deepest node on `path` that exists (a missing field points at its parent). */
/** Where each path of a scenario file's text is (its line, 1-based): for reports that link to the line. */
export function lineFinder(source: string): (path: (string | number)[]) => number {
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, merge: true });
  return (path) => locate(doc, path, (offset) => lines.linePos(offset)).line;
}

function locate(doc: Document, path: (string | number)[], position: Position): { line: number; column: number } {
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as unknown;
    if (isNode(node) && (node as YamlNode).range) {
      const { line, col } = position((node as YamlNode).range![0]);
      return { line, column: col };
    }
    // a mapping key's own position is better than nothing when its value is empty
    const parent = doc.getIn(path.slice(0, n - 1), true) as unknown;
    if (n > 0 && parent && typeof parent === 'object' && 'items' in parent) {
      const pair = (parent as { items: { key?: { value?: unknown; range?: [number] } }[] }).items.find(
        (p) => p.key?.value === path[n - 1],
      );
      if (pair?.key?.range) {
        const { line, col } = position(pair.key.range[0]);
        return { line, column: col };
      }
    }
  }
  return { line: 1, column: 1 };
}

/** The position of a mapping key itself (not of its value, which for a block may be lines below). */
function locateKey(
  doc: Document,
  path: (string | number)[],
  key: string,
  position: Position,
): { line: number; column: number } | undefined {
  const parent = doc.getIn(path, true) as unknown;
  if (!parent || typeof parent !== 'object' || !('items' in parent)) return undefined;
  const pair = (parent as { items: { key?: { value?: unknown; range?: [number] } }[] }).items.find(
    (p) => p.key?.value === key,
  );
  if (!pair?.key?.range) return undefined;
  const { line, col } = position(pair.key.range[0]);
  return { line, column: col };
}

function knownKeys(root: z.ZodType, path: (string | number)[]): string[] | undefined {
  let schema: z.ZodType = root;
  for (const p of path) {
    const def = unwrap(schema);
    if (typeof p === 'number' && def && 'element' in def) schema = def.element as z.ZodType;
    else if (typeof p === 'string' && def && 'shape' in def) schema = (def.shape as Record<string, z.ZodType>)[p]!;
    else return undefined;
    if (!schema) return undefined;
  }
  const def = unwrap(schema);
  return def && 'shape' in def ? Object.keys(def.shape as object) : undefined;
}

function unwrap(schema: z.ZodType): Record<string, unknown> | undefined {
  let s = schema as unknown as { _zod: { def: Record<string, unknown> } };
  for (let i = 0; i < 10; i++) {
    const def = s._zod.def;
    if (def.type === 'object') return { shape: def.shape };
    if (def.type === 'array') return { element: def.element };
    const inner = (def.innerType ?? def.in ?? def.schema) as typeof s | undefined;
    if (!inner) return undefined;
    s = inner;
  }
  return undefined;
}

function fieldName(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (isSeq(value)) return value.items.length ? 'a list' : 'an empty list';
  if (isMap(value)) return value.items.length ? 'a mapping' : 'an empty mapping';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
