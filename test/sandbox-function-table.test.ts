import { describe, expect, expectTypeOf, it } from 'vitest';
import { InvalidSqlError } from '../src/index';
import { ALLOWED_FUNCTIONS, ALLOWED_WINDOW_FUNCTIONS, FUNCTION_GROUPS, sizeRuleOf, type FunctionGroup, type SizeRule } from '../src/sandbox/allowed-functions';

// Type tests: `npm test` runs `tsc --noEmit` over this file, so each `@ts-expect-error` (an error
// that must be there) is checked by the compiler.

describe('the table of allowed functions (docs/sandboxing.md, "Functions" and "Limits")', () => {
  it('cannot allow a function without its size rule: a type error', () => {
    // @ts-expect-error a function without a size rule
    const withoutRule: FunctionGroup = { lower: undefined };
    // @ts-expect-error a rule that is not one of the size rules
    const unknownRule: FunctionGroup = { lower: 'args' };
    const ruled: FunctionGroup = { lower: { scale: 3 }, md5: 'fixed', string_agg: 'collect', max: { top: 1 } };
    expectTypeOf(FUNCTION_GROUPS.string.lower).toMatchTypeOf<SizeRule>();
    expect([withoutRule.lower, unknownRule.lower, ruled.lower]).toEqual([undefined, 'args', { scale: 3 }]);
  });

  it('gives every allowed function its own rule, declared once, and refuses a name without one', () => {
    const declared = Object.values(FUNCTION_GROUPS).flatMap((group: FunctionGroup) => Object.entries(group));
    const names = declared.map(([name]) => name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    expect(names.filter((name) => name !== name.toLowerCase())).toEqual([]);
    expect(new Set(names)).toEqual(new Set([...ALLOWED_FUNCTIONS, ...ALLOWED_WINDOW_FUNCTIONS]));
    for (const [name, rule] of declared) expect([name, sizeRuleOf(name)]).toEqual([name, rule]);
    expect(() => sizeRuleOf('getenv')).toThrow(InvalidSqlError);
    expect(() => sizeRuleOf('getenv')).toThrow(expect.objectContaining({ code: 'invalid_sql', rule: 'function' }));
  });

  it('bounds what aggregates keep by what they keep: a whole state, one value, or one per element asked for', () => {
    // Aggregates that grow with the rows they see are never "the size of their arguments".
    for (const name of ['list', 'array_agg', 'string_agg', 'group_concat', 'listagg', 'histogram', 'json_group_array', 'json_group_object', 'approx_top_k'])
      expect([name, sizeRuleOf(name)]).toEqual([name, 'collect']);
    // One value of the rows, or a list of n given n.
    for (const name of ['min', 'max']) expect([name, sizeRuleOf(name)]).toEqual([name, { top: 1 }]);
    for (const name of ['min_by', 'max_by', 'arg_min', 'arg_max', 'argmin', 'argmax']) expect([name, sizeRuleOf(name)]).toEqual([name, { top: 2 }]);
    for (const name of ['quantile', 'quantile_disc', 'quantile_cont', 'approx_quantile', 'reservoir_quantile']) expect([name, sizeRuleOf(name)]).toEqual([name, { each: 1 }]);
  });
});
