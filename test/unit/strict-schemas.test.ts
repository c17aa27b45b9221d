// The published schemas as a strict consumer loads them: Ajv in strict mode (draft 2020-12) with the standard
// formats (ajv-formats), no allowUnionTypes or other loosening; each compiles and accepts what netrepro writes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';

const schema = (file: string) => JSON.parse(readFileSync(join(PACKAGE_ROOT, file), 'utf8')) as object;
const strict = () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  return ajv;
};

describe('schemas under strict Ajv', () => {
  it.each([
    'scenarios/scenario.schema.json',
    'docs/schemas/run-report.schema.json',
    'docs/schemas/gate-report.schema.json',
  ])('%s compiles', (file) => {
    expect(() => strict().compile(schema(file))).not.toThrow();
  });

  it('accepts a shipped scenario and a recorded run report', () => {
    const scenario = strict().compile(schema('scenarios/scenario.schema.json'));
    expect(
      scenario(parse(readFileSync(join(PACKAGE_ROOT, 'scenarios/service-no-endpoints-reject.yaml'), 'utf8'))),
      JSON.stringify(scenario.errors),
    ).toBe(true);
    const report = strict().compile(schema('docs/schemas/run-report.schema.json'));
    const recorded = JSON.parse(
      readFileSync(
        join(PACKAGE_ROOT, 'test/fixtures/readme-examples/run-br-netfilter-clusterip-same-node.json'),
        'utf8',
      ),
    ) as { report: unknown };
    expect(report(recorded.report), JSON.stringify(report.errors)).toBe(true);
  });
});
