// The published JSON Schema for scenario files works in a stock validator: ajv with its defaults compiles
// it (no custom formats), it accepts every shipped scenario, and every key says what it is for.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/model/package-root.ts';

const schema = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'scenarios/scenario.schema.json'), 'utf8')) as Record<
  string,
  unknown
>;

describe('scenarios/scenario.schema.json', () => {
  it('compiles in ajv with its defaults and accepts every shipped scenario', () => {
    const validate = new Ajv2020({ logger: false }).compile(schema);
    const dir = join(PACKAGE_ROOT, 'scenarios');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
      const ok = validate(parse(readFileSync(join(dir, file), 'utf8'), { merge: true }));
      expect(ok ? [] : validate.errors, file).toEqual([]);
    }
    expect(validate({ id: 'x' })).toBe(false);
  });

  it('describes every property', () => {
    const missing: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      for (const [key, value] of Object.entries(
        (o.properties as Record<string, Record<string, unknown>> | undefined) ?? {},
      )) {
        const alternatives = [
          ...((value.anyOf as Record<string, unknown>[] | undefined) ?? []),
          ...((value.oneOf as Record<string, unknown>[] | undefined) ?? []),
        ];
        if (!value.description && !alternatives.some((a) => a.description)) missing.push(`${path}.${key}`);
        walk(value, `${path}.${key}`);
      }
      for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties']) {
        const child = o[key];
        if (Array.isArray(child)) for (const c of child) walk(c, path);
        else walk(child, path);
      }
    };
    walk(schema, '');
    expect(missing).toEqual([]);
  });
});
