// What `netrepro list` shows (id, title, file, CNI, incident), cached per scenario file: parsing and
// validating every scenario costs several times Node's own start-up, and a listing of unchanged
// files by unchanged code is the same listing. An entry is reused only when the file's size and
// mtime and the validating code (modelCodePrint) match; anything else loads and validates afresh
// (and an invalid file fails `list` as before).
import { stat } from 'node:fs/promises';
import { cacheDir } from './cache-dir.ts';
import { modelCodePrint, readCache, writeCache } from './cache-file.ts';
import { SCENARIO_DIR, scenarioFiles } from './scenario-files.ts';

export interface CatalogueEntry {
  id: string;
  title: string;
  file: string;
  cni: string;
  incident?: string;
}

const CACHE = cacheDir(process.env, 'validated', 'catalogue.json');

const fingerprint = async (file: string) => {
  const s = await stat(file);
  return `${s.size}:${s.mtimeMs}`;
};

export async function scenarioCatalogue(dir = SCENARIO_DIR): Promise<CatalogueEntry[]> {
  const files = await scenarioFiles(dir);
  const [code, prints] = await Promise.all([modelCodePrint(), Promise.all(files.map(fingerprint))]);
  const cached = await readCache<{ code: string; entries: Record<string, { print: string; entry: CatalogueEntry }> }>(
    CACHE,
  );
  const hit =
    cached?.code === code
      ? files.map((f, i) => (cached.entries[f]?.print === prints[i] ? cached.entries[f]!.entry : undefined))
      : [];
  if (files.every((_, i) => hit[i])) return hit as CatalogueEntry[];

  const { loadScenarioFile } = await import('./load-scenario.ts');
  const entries = await Promise.all(
    files.map(
      async (file, i) =>
        hit[i] ??
        (({ scenario }) => ({
          id: scenario.id,
          title: scenario.title,
          file,
          cni: scenario.topology.cni,
          incident: scenario.incident,
        }))(await loadScenarioFile(file)),
    ),
  );
  await writeCache(CACHE, {
    code,
    entries: Object.fromEntries(files.map((f, i) => [f, { print: prints[i]!, entry: entries[i]! }])),
  });
  return entries;
}
