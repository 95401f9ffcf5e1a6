import type { SourceName } from '../sources/source-descriptor';
import { InvalidOptionError, NotFoundError } from '../errors';
import { allSources, BUILT_IN_SOURCES } from '../sources/registry';
import type { SourceDescriptor } from '../sources/source-descriptor';

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
 * Resolves what a request or `ep.ingest` names (a Logflare name, a configured name, a fixed UUID
 * in any letter case, or the internal name `edgeLogs` / `functionEdgeLogs`) to a source.
 */
export class SourceNames {
  readonly names: readonly IngestSourceName[];

  private readonly internal: readonly string[];

  constructor(extra: Readonly<Record<string, SourceName>> = {}) {
    // Every source this process knows, the built-ins' and those declared with defineSource.
    const sources = allSources();
    this.internal = sources.map((d) => d.name);
    const names = logflareNames(sources);
    for (const [name, source] of Object.entries(extra)) {
      if (!this.internal.includes(source)) {
        throw new InvalidOptionError(`storage.sourceNames["${name}"]`, `storage.sourceNames: "${name}" must map to a source (${this.internal.join(', ')}), not "${String(source)}".`);
      }
      if (name === '' || names.some((n) => n.name === name)) throw new InvalidOptionError(`storage.sourceNames["${name}"]`, `storage.sourceNames: "${name}" is empty or already taken.`);
      names.push(Object.freeze({ name, id: null, source }));
    }
    this.names = Object.freeze(names);
  }

  /** The source `ref` names; `NotFoundError` listing the known names otherwise. */
  resolve(ref: string): SourceName {
    if (this.internal.includes(ref)) return ref as SourceName;
    const lower = ref.toLowerCase();
    const found = this.names.find((n) => n.name === ref || n.id === lower);
    if (found) return found.source;
    const known = this.names.map((n) => (n.id ? `${n.name} (${n.id})` : n.name)).join(', ');
    throw new NotFoundError(`No source is named "${printable(ref)}". Known sources: ${known}.`);
  }
}

function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}
