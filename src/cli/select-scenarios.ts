// Which scenarios a command runs: ids, YAML files and id patterns (`conntrack-*`, `*-dns-?`), or --all,
// narrowed by --cni. A pattern or filter that selects nothing is invalid input (exit 2), never an
// empty run that passes.
import { HarnessError } from '../model/errors.ts';
import { loadAllScenarios, selectScenarios } from '../model/find-scenarios.ts';
import type { LoadedScenario } from '../model/load-scenario.ts';
import { CNI_SHAPES } from '../model/primitives.ts';

export interface Selection {
  all?: boolean;
  /** Keep only scenarios of this CNI shape (bridge, flannel, cilium). */
  cni?: string;
}

const isPattern = (id: string) => /[*?]/.test(id);
const patternRegExp = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replaceAll('*', '.*')
      .replaceAll('?', '.')}$`,
  );

export async function selectRunScenarios(ids: readonly string[], options: Selection): Promise<LoadedScenario[]> {
  if (ids.length === 0 && !options.all && !options.cni)
    throw new HarnessError(
      'USAGE',
      'name scenario ids, files or id patterns, or pass --all or --cni',
      'netrepro list shows the ids',
    );
  if (options.cni && !(CNI_SHAPES as readonly string[]).includes(options.cni))
    throw new HarnessError('USAGE', `unknown CNI ${options.cni}`, `--cni is one of: ${CNI_SHAPES.join(', ')}`);
  const everything = options.all || ids.length === 0 || ids.some(isPattern) ? await loadAllScenarios() : [];
  const named = options.all || ids.length === 0 ? everything : await selectNamed(ids, everything);
  const chosen = options.cni ? named.filter((s) => s.scenario.topology.cni === options.cni) : named;
  if (chosen.length === 0) {
    throw new HarnessError(
      'USAGE',
      `none of ${ids.length ? ids.join(' ') : 'the scenarios'} is of CNI ${options.cni}`,
      "netrepro list --json shows each scenario's CNI",
    );
  }
  return chosen;
}

async function selectNamed(ids: readonly string[], everything: readonly LoadedScenario[]): Promise<LoadedScenario[]> {
  const exact = await selectScenarios(ids.filter((id) => !isPattern(id)));
  const matched = ids.filter(isPattern).flatMap((pattern) => {
    const hits = everything.filter((s) => patternRegExp(pattern).test(s.scenario.id));
    if (hits.length === 0)
      throw new HarnessError(
        'USAGE',
        `no scenario id matches ${pattern}`,
        'netrepro list shows the ids; * is any text, ? one character',
      );
    return hits;
  });
  const seen = new Set<string>();
  return [...exact, ...matched].filter((s) => !seen.has(s.scenario.id) && seen.add(s.scenario.id));
}
