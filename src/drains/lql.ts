import { InvalidParameterError } from '../errors';

/** Whether a stored event (its parsed line) passes a rule. */
export type EventMatcher = (event: Readonly<Record<string, unknown>>) => boolean;

/** What the refusals name: the forms of Logflare's LQL a rule may use here. */
export const LQL_FORMS =
  '~".*?" (every event), ~"regex" (event_message matches), a word or "phrase" (event_message contains it), m.field:value (or metadata.field: equal), m.field:~"regex", m.field:>n (>=, <, <=), several of them separated by spaces (all must hold)';

/**
 * A rule's LQL as a matcher of events, within the simple forms of Logflare's LQL (`LQL_FORMS`):
 * `~".*?"` is every event. Anything else (negation, `OR`, chart and time filters, a bad regex) is
 * refused with `InvalidParameterError` (400) naming the supported forms, before anything is kept.
 *
 * @example
 * parseLql('~"error" m.level:warn')({ event_message: 'an error', metadata: { level: 'warn' } }); // true
 */
export function parseLql(lql: unknown): EventMatcher {
  if (typeof lql !== 'string' || lql.trim() === '') throw refuse('lql_string is required');
  const terms = tokens(lql).map(term);
  return terms.length === 1 ? terms[0]! : (event) => terms.every((t) => t(event));
}

/**
 * Whether a rule's LQL is every event (`~".*?"`, what Studio sends, or `~".*"`): such a rule
 * needs no event read to match it.
 *
 * @example
 * isEveryEvent('~".*?"'); // true
 */
export function isEveryEvent(lql: string): boolean {
  return /^~"\.\*\??"$/.test(lql.trim());
}

/** The terms of a query: separated by spaces outside double quotes. */
function tokens(lql: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < lql.length; i++) {
    const c = lql[i]!;
    if (c === '\\' && quoted && i + 1 < lql.length) {
      current += c + lql[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (!quoted && /\s/.test(c)) {
      if (current) out.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  if (quoted) throw refuse(`"${lql.slice(0, 80)}" has an unclosed quote`);
  if (current) out.push(current);
  return out;
}

function term(text: string): EventMatcher {
  if (text.startsWith('~')) {
    const pattern = regex(unquote(text.slice(1), true), text);
    // An event without a message is matched as an empty one: ~".*?" is every event.
    return (event) => pattern.test(typeof event.event_message === 'string' ? event.event_message : '');
  }
  const field = /^(?:m|metadata)\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*):(.+)$/.exec(text);
  if (field) return fieldTerm(['metadata', ...field[1]!.split('.')], field[2]!, text);
  if (/^[A-Za-z0-9_.-]*:/.test(text) || /^[-()|]/.test(text) || /^(OR|AND|NOT)$/.test(text)) throw refuse(`"${text.slice(0, 80)}" is not a supported LQL form`);
  const phrase = unquote(text);
  return (event) => typeof event.event_message === 'string' && event.event_message.includes(phrase);
}

function fieldTerm(path: string[], condition: string, text: string): EventMatcher {
  if (condition.startsWith('~')) {
    const pattern = regex(unquote(condition.slice(1), true), text);
    return (event) => valuesAt(event, path).some((v) => v !== null && typeof v !== 'object' && pattern.test(String(v)));
  }
  const compare = /^(>=|<=|>|<)(-?\d+(?:\.\d+)?)$/.exec(condition);
  if (compare) {
    const [, op, n] = compare;
    const limit = Number(n);
    const holds = (x: number) => (op === '>' ? x > limit : op === '>=' ? x >= limit : op === '<' ? x < limit : x <= limit);
    return (event) => valuesAt(event, path).some((v) => typeof v === 'number' && holds(v));
  }
  if (/^[<>]/.test(condition)) throw refuse(`"${text.slice(0, 80)}" compares with something other than a number`);
  const wanted = unquote(condition);
  return (event) => valuesAt(event, path).some((v) => v !== null && typeof v !== 'object' && String(v) === wanted);
}

/** The values at a path; an array on the way stands for each of its elements (Logflare's repeated records). */
function valuesAt(value: unknown, path: readonly string[]): unknown[] {
  let current: unknown[] = [value];
  for (const key of path) {
    const next: unknown[] = [];
    for (const v of current) {
      for (const item of Array.isArray(v) ? v : [v]) {
        if (typeof item === 'object' && item !== null && Object.hasOwn(item, key)) next.push((item as Record<string, unknown>)[key]);
      }
    }
    current = next;
  }
  return current.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

/** A term's text without its quotes; in a regex only `\"` is unescaped (its other escapes are the regex's). */
function unquote(text: string, isRegex = false): string {
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) return text.slice(1, -1).replace(isRegex ? /\\(")/g : /\\(.)/g, '$1');
  if (text.includes('"')) throw refuse(`"${text.slice(0, 80)}" has a stray quote`);
  return text;
}

function regex(source: string, text: string): RegExp {
  try {
    return new RegExp(source);
  } catch (error) {
    throw refuse(`the regular expression of "${text.slice(0, 80)}" does not parse (${(error as Error).message})`);
  }
}

function refuse(why: string): InvalidParameterError {
  return new InvalidParameterError('lql_string', `The rule cannot be used: ${why}. Supported: ${LQL_FORMS}.`);
}
