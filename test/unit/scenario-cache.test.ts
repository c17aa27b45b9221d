// The validated-scenario cache gives back exactly what validation returned, and only for the same bytes.
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/model/load-scenario.ts';
import { cachedScenario } from '../../src/model/scenario-cache.ts';
import { scenarioFiles } from '../../src/model/scenario-files.ts';

describe('scenario cache', () => {
  it("every shipped scenario survives the cache's JSON unchanged (what a hit returns is what validation returned)", async () => {
    for (const file of await scenarioFiles()) {
      const scenario = parseScenario(readFileSync(file), file);
      expect(isDeepStrictEqual(JSON.parse(JSON.stringify(scenario)), scenario), file).toBe(true);
    }
  });

  it('the same bytes are validated once; other bytes are validated afresh', async () => {
    const [file] = await scenarioFiles();
    const bytes = readFileSync(file!);
    // a byte no run uses (a trailing comment with a fresh value): a miss first, then a hit
    const unique = Buffer.concat([bytes, Buffer.from(`\n# cache test ${process.pid} ${Date.now()}\n`)]);
    let validations = 0;
    const validate = () => (validations++, parseScenario(unique, file!));
    const first = await cachedScenario(unique, validate);
    const second = await cachedScenario(unique, validate);
    expect(validations).toBe(1);
    expect(second).toEqual(first);
    expect(second).not.toBe(first); // a copy: callers own what they get
    await cachedScenario(Buffer.concat([unique, Buffer.from('# another\n')]), validate);
    expect(validations).toBe(2);
  });
});
