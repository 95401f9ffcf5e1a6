import { InvalidParameterError, LogEndpointsError } from '../errors';
import { printable } from '../util/printable';

/**
 * Parses a raw query string (`?a=1&b=2`) the way form encoding means it (`+` is a space), but
 * strictly: malformed percent-encoding is a 400 instead of being passed through or crashing.
 * Returns every value of every name, in order.
 */
export function parseQueryString(search: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const text = search.startsWith('?') ? search.slice(1) : search;
  if (text === '') return out;
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
    if (name === null) {
      throw new LogEndpointsError('bad_request', 400, 'The query string has a parameter name with malformed percent-encoding.');
    }
    const value = decodeComponent(eq < 0 ? '' : pair.slice(eq + 1));
    if (value === null) {
      throw new InvalidParameterError(printable(name), `Parameter "${printable(name)}" has malformed percent-encoding.`);
    }
    const list = out.get(name);
    if (list) list.push(value);
    else out.set(name, [value]);
  }
  return out;
}

/**
 * One value per parameter. A declared parameter given more than once is refused (which value
 * was meant is unknowable); unknown parameters are ignored by the library, repeated or not.
 */
export function singleValues(query: Map<string, string[]>, declared: readonly string[]): Record<string, string> {
  // No prototype: a parameter named `__proto__` is just a name.
  const out: Record<string, string> = Object.create(null);
  for (const [name, values] of query) {
    if (values.length > 1 && declared.includes(name)) {
      throw new InvalidParameterError(name, `Parameter "${name}" is given more than once.`);
    }
    out[name] = values[0]!;
  }
  return out;
}

/** A percent-decoded query-string component (`+` is a space), or null when the encoding is malformed. */
function decodeComponent(text: string): string | null {
  return decodePathSegment(text.replace(/\+/g, ' '));
}

/** A percent-decoded path segment, or null when the encoding is malformed. */
export function decodePathSegment(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
