import { InvalidParameterError } from '../errors';
import type { EngineParam } from '../engine/engine';
import { formatIsoMicros, parseIsoMicros } from '../time/iso';
import { intervalSeconds, isInterval, type IntervalName, type IntervalSeconds } from './intervals';

/** Longest accepted parameter value (docs/semantics.md, "Parameters"). */
export const MAX_PARAM_LENGTH = 1024;

/** How a parameter's text is read and checked. */
export type ParamFormat = 'text' | 'one-of' | 'iso-timestamp' | 'regex' | 'integer';

/**
 * A declared parameter as data: what validation, the cache key, `ep.definitions`, OpenAPI and the
 * dashboard read. Made by the `p` builders; never written by hand.
 */
export interface ParamSpec {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
  /** `iso-timestamp` must parse as ISO 8601; `regex` must compile as an RE2 pattern; `integer` is a whole number. */
  readonly format: ParamFormat;
  /** `one-of`: the values with a meaning of their own. */
  readonly values?: readonly string[];
  /** `one-of`: what any other non-empty value behaves like; without it, another value is an error. */
  readonly otherwise?: string;
  /**
   * `one-of` whose values are all interval values (`1hr`, `daily`, ...): the window and bucket each
   * means, in seconds (src/definitions/intervals.ts). What the dashboard reads to place a range.
   */
  readonly intervals?: Readonly<Record<string, IntervalSeconds>>;
  /** The value used when the parameter is absent or empty (then it is not required). */
  readonly default?: string;
  /** `integer`: the smallest and largest accepted values. */
  readonly min?: number;
  readonly max?: number;
}

/** Declared parameters after validation, as the cache keys them: absent and empty are `null`. */
export type NormalizedParams = Readonly<Record<string, string | null>>;

declare const INPUT: unique symbol;
declare const REQUIRED: unique symbol;

/**
 * One parameter being declared: `p.text()`, `p.oneOf([...])`, `p.isoTimestamp()`, `p.re2()`,
 * `p.integer()`, then `.optional()`, `.default(v)` or `.describe(text)`. Required unless told
 * otherwise. The type parameters carry what a typed call passes and whether it must.
 *
 * @example
 * const params = { project: p.text(), since: p.isoTimestamp().optional(), min_status: p.integer().default(400) };
 */
export interface Param<Input, Required extends boolean> {
  /** @internal the declared spec (without its name, which is the key it is declared under) */
  readonly spec: Omit<ParamSpec, 'name'>;
  readonly [INPUT]?: Input;
  readonly [REQUIRED]?: Required;
  /** Absent or empty means "not given" (bound as NULL). */
  optional(): Param<Input, false>;
  /** Absent or empty means this value. */
  default(value: Input): Param<Input, false>;
  /** Shown in `ep.definitions`, OpenAPI and the dashboard. */
  describe(description: string): Param<Input, Required>;
}

/** Any declared parameter. */
export type AnyParam = Param<any, boolean>;

/** What a typed call passes for one parameter. */
export type ParamInput<P> = P extends Param<infer I, boolean> ? I : never;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The parameters object of a typed call: required ones must be there, misspelt ones are errors. */
export type ParamsOf<P extends Record<string, AnyParam>> = Simplify<
  { -readonly [K in keyof P as P[K] extends Param<any, true> ? K : never]: ParamInput<P[K]> } & {
    -readonly [K in keyof P as P[K] extends Param<any, true> ? never : K]?: ParamInput<P[K]> | null;
  }
>;

function param<Input, Required extends boolean>(spec: Omit<ParamSpec, 'name'>): Param<Input, Required> {
  return Object.freeze({
    spec: Object.freeze(spec),
    optional: () => param<Input, false>({ ...spec, required: false }),
    default: (value: Input) => param<Input, false>({ ...spec, required: false, default: defaultText(spec, value) }),
    describe: (description: string) => param<Input, Required>({ ...spec, description }),
  }) as Param<Input, Required>;
}

function defaultText(spec: Omit<ParamSpec, 'name'>, value: unknown): string {
  const text = value instanceof Date ? value.toISOString() : String(value);
  // A default the parameter itself would refuse is a mistake in the definition, told at once.
  checkValue({ ...spec, name: 'default' }, text);
  return text;
}

/**
 * The parameter builders of `defineEndpoint`. Every value arrives as text (a query string); each
 * builder says how it is checked, normalised for the cache and bound to the SQL.
 *
 * @example
 * import { defineEndpoint, p } from 'log-endpoints';
 * const params = {
 *   project: p.text(),                                   // required text
 *   tier: p.oneOf(['FREE', 'PRO'], { otherwise: 'FREE' }).optional(),
 *   since: p.isoTimestamp().optional(),                  // bound as a TIMESTAMP
 *   url: p.re2().describe('RE2 pattern searched in the URL'),
 *   min_status: p.integer({ min: 100, max: 599 }).default(400),
 * };
 */
export const p = {
  /** Any text (at most 1024 characters), bound as VARCHAR. */
  text: () => param<string, true>({ format: 'text', required: true, description: '' }),
  /**
   * One of `values`, bound as VARCHAR. With `otherwise`, any other non-empty value behaves like
   * that one (and is cached as it); without, another value is an `invalid_parameter` listing them.
   * Values that are all intervals (`5min` ... `7day`, `minutely`, `hourly`, `daily`) carry their
   * meanings (`intervals`): a window and a bucket each, the same for every endpoint.
   */
  oneOf: <const V extends string, const O extends V | undefined = undefined>(values: readonly V[], options: { otherwise?: O } = {}) =>
    param<O extends string ? V | (string & {}) : V, true>({
      format: 'one-of',
      required: true,
      description: '',
      values: Object.freeze([...values]),
      ...(options.otherwise !== undefined ? { otherwise: options.otherwise } : {}),
      ...(values.length > 0 && values.every(isInterval) ? { intervals: Object.freeze(Object.fromEntries(values.map((v) => [v, Object.freeze(intervalSeconds(v as IntervalName))]))) } : {}),
    }),
  /** An ISO 8601 instant (offset optional, UTC when absent), bound as a TIMESTAMP (UTC, microseconds). */
  isoTimestamp: () => param<string | Date, true>({ format: 'iso-timestamp', required: true, description: '' }),
  /** An RE2 regular expression, checked by the engine before the query runs; bound as VARCHAR. */
  re2: () => param<string, true>({ format: 'regex', required: true, description: '' }),
  /** A whole number (optionally between `min` and `max`), bound as BIGINT. */
  integer: (range: { min?: number; max?: number } = {}) => param<number | string, true>({ format: 'integer', required: true, description: '', ...range }),
};

/** Validates and normalises one present, non-empty value (the cache key holds the result). */
export function checkValue(spec: ParamSpec, value: string): string {
  if (value.length > MAX_PARAM_LENGTH) {
    throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" is longer than ${MAX_PARAM_LENGTH} characters.`);
  }
  switch (spec.format) {
    case 'one-of':
      if (spec.values!.includes(value)) return value;
      if (spec.otherwise !== undefined) return spec.otherwise;
      throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" must be one of ${spec.values!.join(', ')}.`);
    case 'iso-timestamp': {
      const micros = parseIsoMicros(value);
      if (micros === null) throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" must be an ISO 8601 timestamp.`);
      return formatIsoMicros(micros);
    }
    case 'integer': {
      if (!/^[+-]?\d{1,15}$/.test(value.trim())) throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" must be a whole number.`);
      const n = Number(value.trim());
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
        const range = `${spec.min ?? '-∞'} to ${spec.max ?? '∞'}`;
        throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" must be a whole number from ${range}.`);
      }
      return String(n);
    }
    default:
      return value;
  }
}

/**
 * Validates and normalises the declared parameters of a call (docs/semantics.md, "Parameters"):
 * unknown names are ignored, absent and empty are the same, required ones must be present,
 * defaults fill absent ones, values are at most 1024 characters, fallback values are replaced by
 * what they behave like, timestamps are rewritten in one canonical form.
 */
export function normalizeParams(definition: { params: readonly ParamSpec[] }, raw: Readonly<Record<string, unknown>>): NormalizedParams {
  const out: Record<string, string | null> = {};
  for (const spec of definition.params) {
    let value = raw[spec.name];
    if (typeof value === 'number' && spec.format === 'integer') value = String(value);
    if (value instanceof Date && spec.format === 'iso-timestamp') value = Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" must be a string.`);
    }
    if (value === undefined || value === null || value === '') {
      if (spec.default !== undefined) value = spec.default;
      else if (spec.required) throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" is required.`);
      else {
        out[spec.name] = null;
        continue;
      }
    }
    out[spec.name] = checkValue(spec, value as string);
  }
  return out;
}

/** The value a normalised parameter is bound as: timestamps tagged, integers as numbers. */
export function boundValue(spec: ParamSpec, value: string | null): EngineParam {
  if (value === null) return null;
  if (spec.format === 'iso-timestamp') return { timestamp: parseIsoMicros(value)! };
  if (spec.format === 'integer') return Number(value);
  return value;
}
