// Validated scenarios, cached by the file's bytes and the validating code's: parsing YAML and
// validating 17 scenarios cost ~0.3 s of a run's start-up (cold code), and the same bytes checked by
// the same code give the same scenario. A hit needs the same netrepro version, the same content of
// every module under src/model (the schema, its step and probe kinds, the reference checks), and
// the same file bytes; anything else parses and validates afresh. Only valid scenarios are kept: an
// invalid file is always checked again and reported as before. The scenario is stored as JSON, which
// gives back exactly what validation returned (a unit test holds every shipped scenario to that).
import { createHash } from 'node:crypto';
import { cacheDir } from './cache-dir.ts';
import { modelCodePrint, readCache, writeCache } from './cache-file.ts';
import type { Scenario } from './scenario-schema.ts';

const CACHE = cacheDir(process.env, 'validated', 'scenarios.json');

interface CacheFile {
  code: string;
  /** sha256 of a scenario file's bytes -> the validated scenario. */
  entries: Record<string, Scenario>;
}

let state: Promise<{ code: string; cache: CacheFile }> | undefined;
/** A write scheduled (after the current batch of validations) and not begun. */
let scheduled = false;
/** Writes scheduled or under way. */
const writes = new Set<Promise<void>>();

function load(): Promise<{ code: string; cache: CacheFile }> {
  return (state ??= (async () => {
    const code = await modelCodePrint();
    const read = await readCache<CacheFile>(CACHE);
    return { code, cache: read?.code === code ? read : { code, entries: {} } };
  })());
}

/** The cache's write under way, if any: awaited before the process exits, so that no half-written file stays. */
export const scenarioCacheWritten = async (): Promise<void> => {
  await Promise.all(writes);
};

/** `validate()` of `bytes`, or what it returned for the same bytes and code before. */
export async function cachedScenario(bytes: Buffer, validate: () => Scenario): Promise<Scenario> {
  const key = createHash('sha256').update(bytes).digest('hex');
  const { cache } = await load().catch(() => ({ cache: undefined }));
  const hit = cache?.entries[key];
  if (hit) return structuredClone(hit); // callers own what they get
  const scenario = validate();
  if (cache) {
    cache.entries[key] = scenario;
    if (!scheduled) {
      scheduled = true;
      const write = new Promise((resolve) => setImmediate(resolve)).then(() => {
        scheduled = false;
        return writeCache(CACHE, cache);
      });
      writes.add(write);
      void write.finally(() => writes.delete(write));
    }
  }
  return scenario;
}
