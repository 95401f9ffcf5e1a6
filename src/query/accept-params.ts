import type { AnyEndpointDefinition, NormalizedParams } from '../definitions/definition';
import { normalizeParams } from '../definitions/params';
import type { Engine } from '../engine/engine';
import { re2PatternProblem } from '../engine/re2-pattern';
import { InvalidParameterError } from '../errors';
import type { DefinitionsInForce } from './definitions-in-force';

/** Why a regular expression is refused, or null. */
export type PatternJudge = (pattern: string) => Promise<string | null>;

/**
 * How an instance judges a regex parameter: by RE2 as DuckDB compiles it first, whatever the
 * engine, so the same pattern gets the same answer everywhere (src/engine/re2-pattern.ts); then
 * by the engine, which may refuse more. The DuckDB engine's own check is that very check: no
 * second DuckDB (and no second look) for it.
 *
 * @example
 * const judge = patternJudge(engine, options.engine === undefined);
 * await judge('(?<n>x)'); // 'invalid perl operator: (?<'
 */
export function patternJudge(engine: Pick<Engine, 'checkPattern'>, ownDuckDB: boolean): PatternJudge {
  return async (pattern) => (ownDuckDB ? null : await re2PatternProblem(pattern)) ?? (await engine.checkPattern(pattern));
}

/**
 * A call's parameters as the cache keys them; a bad one is an `InvalidParameterError` that never
 * reaches the engine or the cache. Those the instance ignores are bound as NULL: one cache key for
 * every value.
 *
 * @example
 * const params = await acceptParams(logsAll, { project: 'abc' }, inForce, judge);
 */
export async function acceptParams(definition: AnyEndpointDefinition, raw: Readonly<Record<string, unknown>> | undefined, inForce: DefinitionsInForce, judge: PatternJudge): Promise<NormalizedParams> {
  const params: Record<string, string | null> = normalizeParams(definition, raw ?? {});
  for (const name of inForce.ignored(definition).keys()) params[name] = null;
  for (const spec of definition.params) {
    const value = params[spec.name];
    if (spec.format !== 'regex' || value === null || value === undefined) continue;
    const problem = await judge(value);
    if (problem !== null) throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" is not a valid regular expression: ${problem}`);
  }
  definition.check?.(params);
  return params;
}
