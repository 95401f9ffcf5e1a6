import { InvalidOptionError } from '../errors';
import { edgeLogs } from './edge-logs';
import { functionEdgeLogs } from './function-edge-logs';
import type { SourceDescriptor } from './source-descriptor';

export { edgeLogs, functionEdgeLogs };

/** The two sources every instance knows (descriptors made with `defineSource`, like a user's). */
export const BUILT_IN_SOURCES = [edgeLogs, functionEdgeLogs] as const;

/** The names of the built-in sources. */
export type BuiltInSourceName = (typeof BUILT_IN_SOURCES)[number]['name'];

/**
 * Every source this process knows, by name: the built-ins, then those `createEndpoints` was given
 * (`sourceDefinitions`). Source names are process-wide: one name is one descriptor, so the file
 * readers, compaction and ingest all derive the same relation from it.
 */
const known = new Map<string, SourceDescriptor>(BUILT_IN_SOURCES.map((s) => [s.name, s]));

/** Adds user sources; a name, relation or Logflare name another source has is refused. */
export function registerSources(descriptors: unknown): SourceDescriptor[] {
  if (descriptors === undefined) return [];
  if (!Array.isArray(descriptors)) throw new InvalidOptionError('sourceDefinitions', 'sourceDefinitions must be a list of sources made with defineSource().');
  const added: SourceDescriptor[] = [];
  for (const [i, d] of descriptors.entries()) {
    if (!d || typeof d !== 'object' || typeof d.relation !== 'string' || !Array.isArray(d.columns)) {
      throw new InvalidOptionError(`sourceDefinitions[${i}]`, `sourceDefinitions[${i}] is not a source: make it with defineSource().`);
    }
    const same = known.get(d.name);
    if (same === d) continue;
    const clash = [...known.values()].find((o) => o.name === d.name || relationsOf(o).some((r) => relationsOf(d).includes(r)) || o.logflare.names.some((n) => d.logflare.names.includes(n)) || o.logflare.id === d.logflare.id);
    if (clash) {
      throw new InvalidOptionError(`sourceDefinitions[${i}]`, `Source "${d.name}" shares its name, relation (or a rollup's), Logflare name or UUID with source "${clash.name}".`);
    }
    known.set(d.name, d);
    added.push(d);
  }
  return added;
}

/** The relations a source presents: its own and its rollups'. */
function relationsOf(d: SourceDescriptor): string[] {
  return [d.relation, ...Object.keys(d.rollups ?? {})];
}

/** The descriptor of a source name; an error for a name no source has. */
export function sourceDescriptor(name: string): SourceDescriptor {
  const found = known.get(name);
  if (!found) throw new InvalidOptionError(`sources.${name}`, `sources.${name} is not a log source; the sources are ${[...known.keys()].join(', ')} (declare more with defineSource).`);
  return found;
}

/** Every known source, built-ins first. */
export function allSources(): SourceDescriptor[] {
  return [...known.values()];
}

/** Whether a name is a known source. */
export function isSource(name: string): boolean {
  return known.has(name);
}
