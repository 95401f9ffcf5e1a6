import type { SourceName } from '../engine/engine';
import { InvalidOptionError, NotFoundError } from '../errors';

/** A name (or UUID) ingest accepts for a source. */
export interface IngestSourceName {
  /** Logflare's source name, e.g. `cloudflare.logs.prod`, or one you configured. */
  name: string;
  /** Its fixed UUID (`?source=<uuid>`, pino-logflare's `sourceToken`); null for configured names. */
  id: string | null;
  /** The source its events go to. */
  source: SourceName;
}

/**
 * The two sources under Logflare's names, with UUIDs chosen once and fixed forever: a shipper
 * configured with either keeps working against every installation.
 */
export const LOGFLARE_SOURCE_NAMES: readonly IngestSourceName[] = Object.freeze([
  Object.freeze({ name: 'cloudflare.logs.prod', id: '49d2db0a-0317-43a6-9cd4-0b1425da96f0', source: 'edgeLogs' as const }),
  Object.freeze({ name: 'deno-relay-logs', id: '25810149-e19d-4b24-a57a-0e886add2d74', source: 'functionEdgeLogs' as const }),
]);

const INTERNAL: readonly SourceName[] = ['edgeLogs', 'functionEdgeLogs'];

/**
 * Resolves what a request or `ep.ingest` names (a Logflare name, a configured name, a fixed UUID
 * in any letter case, or the internal name `edgeLogs` / `functionEdgeLogs`) to a source.
 */
export class SourceNames {
  readonly names: readonly IngestSourceName[];

  constructor(extra: Readonly<Record<string, SourceName>> = {}) {
    const names = [...LOGFLARE_SOURCE_NAMES];
    for (const [name, source] of Object.entries(extra)) {
      if (!INTERNAL.includes(source)) {
        throw new InvalidOptionError(`storage.sourceNames["${name}"]`, `storage.sourceNames: "${name}" must map to edgeLogs or functionEdgeLogs, not "${String(source)}".`);
      }
      if (name === '' || names.some((n) => n.name === name)) throw new InvalidOptionError(`storage.sourceNames["${name}"]`, `storage.sourceNames: "${name}" is empty or already taken.`);
      names.push(Object.freeze({ name, id: null, source }));
    }
    this.names = Object.freeze(names);
  }

  /** The source `ref` names; `NotFoundError` listing the known names otherwise. */
  resolve(ref: string): SourceName {
    if ((INTERNAL as readonly string[]).includes(ref)) return ref as SourceName;
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
