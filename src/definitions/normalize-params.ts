import { InvalidParameterError } from '../errors';
import { formatIsoMicros, parseIsoMicros } from '../time/iso';
import type { EndpointDefinition, NormalizedParams } from './definition';

/** Longest accepted parameter value (docs/semantics.md, "Parameters"). */
export const MAX_PARAM_LENGTH = 1024;

/** Raw parameters as they arrive: query-string text. Non-strings are refused. */
export type RawParams = Readonly<Record<string, unknown>>;

/**
 * Validates and normalises the declared parameters of a call (docs/semantics.md, "Parameters"): unknown names are
 * ignored, absent and empty are the same, required ones must be present, values are at most
 * 1024 characters, fallback values are replaced by what they behave like, timestamps are
 * rewritten in one canonical form. The result is what the cache keys on.
 */
export function normalizeParams(definition: EndpointDefinition, raw: RawParams): NormalizedParams {
  const out: Record<string, string | null> = {};
  for (const spec of definition.params) {
    const value = raw[spec.name];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" must be a string.`);
    }
    if (value === undefined || value === null || value === '') {
      if (spec.required) throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" is required.`);
      out[spec.name] = null;
      continue;
    }
    if (value.length > MAX_PARAM_LENGTH) {
      throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" is longer than ${MAX_PARAM_LENGTH} characters.`);
    }
    out[spec.name] = normalizeValue(spec, value);
  }
  return out;
}

function normalizeValue(spec: EndpointDefinition['params'][number], value: string): string {
  if (spec.values && !spec.values.includes(value)) {
    if (spec.otherwise !== undefined) return spec.otherwise;
    throw new InvalidParameterError(
      spec.name,
      `Parameter "${spec.name}" must be one of ${spec.values.join(', ')}.`,
    );
  }
  if (spec.format === 'iso-timestamp') {
    const micros = parseIsoMicros(value);
    if (micros === null) {
      throw new InvalidParameterError(spec.name, `Parameter "${spec.name}" must be an ISO 8601 timestamp.`);
    }
    return formatIsoMicros(micros);
  }
  return value;
}
