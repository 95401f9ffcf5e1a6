import type { SourceName } from '../sources/source-descriptor';
import { parseExactJson } from '../util/exact-json';
import type { DrainStore } from './drain-store';
import { isEveryEvent, parseLql, type EventMatcher } from './lql';

/** A drain's rules for one source, as their LQL texts (what the drain's cursor keeps). */
export type SourceRules = readonly string[];

/** A drain's rules for one source, compiled: null for every event (no line parsed to match it). */
export type Matchers = (EventMatcher | null)[];

/**
 * Each drain's rules per source, as the store holds them: the one reading of the rules that the
 * forwarder (what it sends) and the drains' cursors (what a drop counts while none forwards) share.
 *
 * @example
 * drainRules(store).get(1)?.get('authLogs'); // ['~".*?"']
 */
export function drainRules(store: DrainStore): Map<number, Map<SourceName, string[]>> {
  const drains = new Set(store.list().map((d) => d.id));
  const rules = new Map<number, Map<SourceName, string[]>>();
  for (const rule of store.rules()) {
    const source = store.sourceOf(rule);
    if (source === null || !drains.has(rule.backend_id)) continue;
    const perSource = rules.get(rule.backend_id) ?? new Map<SourceName, string[]>();
    perSource.set(source, [...(perSource.get(source) ?? []), rule.lql_string]);
    rules.set(rule.backend_id, perSource);
  }
  return rules;
}

/**
 * A source's rules compiled (the store checked each when it was added).
 *
 * @example
 * compileRules(['~".*?"']); // [null]: every event
 */
export function compileRules(rules: SourceRules): Matchers {
  return rules.map((lql) => (isEveryEvent(lql) ? null : parseLql(lql)));
}

/**
 * The events of a segment's lines that any of the rules match, parsed; a line that is not JSON is
 * no event (ingest writes JSON only).
 *
 * @example
 * matchingEvents(['{"event_message":"an error"}'], compileRules(['~"error"'])).length; // 1
 */
export function matchingEvents(lines: readonly string[], matchers: Matchers): Record<string, unknown>[] {
  const everything = matchers.includes(null);
  const out: Record<string, unknown>[] = [];
  for (const line of lines) {
    let event: Record<string, unknown>;
    try {
      event = parseExactJson(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (everything || matchers.some((m) => m!(event))) out.push(event);
  }
  return out;
}
