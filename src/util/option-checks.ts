import { InvalidOptionError } from '../errors';

/** A short, safe rendering of a bad value for an error message (`0`, `"lots"`, `an object`). */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value == null) return String(value);
  if (typeof value === 'function') return 'a function';
  return Array.isArray(value) ? 'an array' : 'an object';
}

/** A plain object (or undefined when `optional`); anything else names the option. */
export function checkObject(option: string, value: unknown, optional = true): Record<string, unknown> | undefined {
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidOptionError(option, `${option} must be an object, not ${describeValue(value)}.`);
  }
  return value as Record<string, unknown>;
}

/** An integer from `min` up (and at most `max`), or undefined. */
export function checkInteger(option: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? (min === 1 ? 'a positive integer' : `an integer of at least ${min}`) : `an integer from ${min} to ${max}`;
    throw new InvalidOptionError(option, `${option} must be ${range}, not ${describeValue(value)}.`);
  }
}

/** A finite number above zero (milliseconds, seconds), or undefined. */
export function checkPositiveNumber(option: string, value: unknown, unit: string): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidOptionError(option, `${option} must be a positive number of ${unit}, not ${describeValue(value)}.`);
  }
}

export function checkFunction(option: string, value: unknown, what: string): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new InvalidOptionError(option, `${option} must be ${what}, not ${describeValue(value)}.`);
  }
}

/** An optional option that is one of a few texts. */
export function checkOneOf(option: string, value: unknown, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value as string)) {
    throw new InvalidOptionError(option, `${option} must be ${allowed.map((a) => `'${a}'`).join(' or ')}, not ${describeValue(value)}.`);
  }
}

export function checkBoolean(option: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new InvalidOptionError(option, `${option} must be true or false, not ${describeValue(value)}.`);
  }
}

/** An object that has every one of `methods` as a function (an interface you implement). */
export function checkMethods(option: string, value: unknown, methods: readonly string[], what: string): void {
  const missing = typeof value === 'object' && value !== null ? methods.filter((m) => typeof (value as Record<string, unknown>)[m] !== 'function') : methods;
  if (missing.length) {
    throw new InvalidOptionError(option, `${option} must be ${what} (with ${methods.join(', ')}); ${describeValue(value)} lacks ${missing.join(', ')}.`);
  }
}
