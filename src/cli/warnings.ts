import { compileGlob } from '../files/glob';
import { DirectoryCache, listGlob } from '../files/list-glob';
import type { CliIO } from './io';
import type { AnyEndpointDefinition } from '../definitions/definition';
import { sourcesReadBy } from '../query/statement-reads';
import type { SourceDescriptor } from '../sources/source-descriptor';
import type { SourceSet } from '../sources/source-set';

/** One line per glob that matches no log file: an empty answer is more often a typo than no logs. `flag` as it was typed (`--input`, `--source edge_logs=`). */
export function warnEmptyGlobs(io: CliIO, flag: string, globs: readonly string[] | undefined): void {
  const cache = new DirectoryCache();
  for (const glob of globs ?? []) {
    const listing = listGlob(compileGlob(glob), cache);
    if (listing.files.length === 0 && listing.datasets.length === 0)
      io.stderr.write(`warning: ${flag}${flag.endsWith('=') ? '' : ' '}'${glob}' matches no log file (.ndjson, .jsonl, .json, .gz, .zst, .parquet)\n`);
  }
}

/** The same for every glob of the command line's sources, each named by the flag it came with. */
export function warnEmptySourceGlobs(io: CliIO, values: Readonly<Record<string, unknown>>, sources: SourceSet): void {
  for (const pair of (values.source as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    warnEmptyGlobs(io, `--source ${pair.slice(0, eq)}=`, [pair.slice(eq + 1)]);
  }
  for (const d of sources.list) if (d.cli.flag) warnEmptyGlobs(io, `--${d.cli.flag}`, values[d.cli.flag] as string[] | undefined);
}

/** How the command line gives a source's logs: its own flag, or the generic form. */
function globFlag(d: SourceDescriptor): string {
  return d.cli.flag ? `--${d.cli.flag}` : `--source ${d.relation}=<glob>`;
}

/**
 * One line per source that endpoints read but no glob was given for: those endpoints answer no
 * rows (`definitions`: the ones to look at, e.g. the one endpoint `query` runs).
 */
export function warnMissingSources(io: CliIO, globs: Readonly<Record<string, readonly string[]>>, sources: SourceSet, definitions: readonly AnyEndpointDefinition[]): void {
  const readers = new Map<SourceDescriptor, string[]>();
  for (const definition of definitions) {
    for (const source of sourcesReadBy(definition.sql.duckdb, sources)) readers.set(source, [...(readers.get(source) ?? []), definition.name]);
  }
  for (const [source, names] of readers) {
    if ((globs[source.name] ?? []).length === 0) io.stderr.write(`warning: no ${globFlag(source)} given: ${names.join(' and ')} will answer no rows\n`);
  }
}
