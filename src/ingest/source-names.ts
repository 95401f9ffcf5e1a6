import type { SourceName } from '../sources/source-descriptor';
import { InvalidOptionError, NotFoundError } from '../errors';
import { BUILT_IN_SOURCES } from '../sources/built-ins';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';
import { printable } from '../util/printable';

/** A name (or UUID) ingest accepts for a source. */
export interface IngestSourceName {
  /** Logflare's source name, e.g. `cloudflare.logs.prod`, or one you configured. */
  name: string;
  /** Its fixed UUID (`?source=<uuid>`, pino-logflare's `sourceToken`); null for configured names. */
  id: string | null;
  /** The source its events go to. */
  source: SourceName;
}

/** The Logflare names of the given sources, each with its source's fixed UUID (the first name's). */
function logflareNames(sources: readonly SourceDescriptor[]): IngestSourceName[] {
  return sources.flatMap((d) => d.logflare.names.map((name, i) => Object.freeze({ name, id: i === 0 ? d.logflare.id : null, source: d.name })));
}

/**
 * The two built-in sources under Logflare's names, with UUIDs chosen once and fixed forever: a
 * shipper configured with either keeps working against every installation.
 */
export const LOGFLARE_SOURCE_NAMES: readonly IngestSourceName[] = Object.freeze(logflareNames(BUILT_IN_SOURCES));

/**
 * Resolves what a request or `ep.ingest` names to a source of the instance: a Logflare name or a
 * configured one (in any letter case: Studio sends `postgREST.logs.prod` lower-cased), a fixed
 * UUID (any case), or the source's own name (`edgeLogs`). One map look-up per request.
 */
export class SourceNames {
  readonly names: readonly IngestSourceName[];

  /** Logflare and configured names and UUIDs, lower-cased. */
  private readonly byName = new Map<string, SourceName>();
  /** The sources' own names, matched exactly (first: a lower-cased name never shadows one). */
  private readonly own: ReadonlySet<string>;

  constructor(sources: SourceSet, extra: Readonly<Record<string, SourceName>> = {}) {
    const names = logflareNames(sources.list);
    for (const n of names) {
      this.byName.set(n.name.toLowerCase(), n.source);
      if (n.id) this.byName.set(n.id, n.source);
    }
    for (const [name, source] of Object.entries(extra)) {
      if (!sources.has(source)) {
        throw new InvalidOptionError(`storage.sourceNames["${name}"]`, `storage.sourceNames: "${name}" must map to a source (${sources.names.join(', ')}), not "${String(source)}".`);
      }
      if (name === '' || this.byName.has(name.toLowerCase()) || sources.has(name)) {
        throw new InvalidOptionError(`storage.sourceNames["${name}"]`, `storage.sourceNames: "${name}" is empty or already taken (names are matched in any letter case).`);
      }
      this.byName.set(name.toLowerCase(), source);
      names.push(Object.freeze({ name, id: null, source }));
    }
    this.own = new Set(sources.names);
    this.names = Object.freeze(names);
  }

  /** The source `ref` names; `NotFoundError` listing the known names otherwise. */
  resolve(ref: string): SourceName {
    if (this.own.has(ref)) return ref;
    const found = this.byName.get(ref.toLowerCase());
    if (found !== undefined) return found;
    const known = this.names.map((n) => (n.id ? `${n.name} (${n.id})` : n.name)).join(', ');
    throw new NotFoundError(`No source is named "${printable(ref, 64)}". Known sources: ${known}.`);
  }
}
