import { compileGlob } from '../files/glob';
import { DirectoryCache, listGlob } from '../files/list-glob';
import type { CliIO } from './io';
import { findDefinition } from '../definitions/registry';
import { sourcesReadBy } from '../engine/duckdb/duckdb-engine';

/** One line per glob that matches no log file: an empty answer is more often a typo than no logs. */
export function warnEmptyGlobs(io: CliIO, flag: string, globs: readonly string[] | undefined): void {
  const cache = new DirectoryCache();
  for (const glob of globs ?? []) {
    const listing = listGlob(compileGlob(glob), cache);
    if (listing.files.length === 0 && listing.datasets.length === 0) io.stderr.write(`warning: --${flag} '${glob}' matches no log file (.ndjson, .jsonl, .json, .gz, .zst, .parquet)\n`);
  }
}

/** The CLI flag of each built-in source's globs (parse-options.ts). */
const FLAGS: Record<string, string> = { edgeLogs: '--edge-logs', functionEdgeLogs: '--function-logs' };

/** The query command was asked for an endpoint whose log was not given at all. */
export function warnMissingSource(io: CliIO, nameOrId: string, sources: Readonly<Record<string, readonly string[]>>): void {
  let definition;
  try {
    definition = findDefinition(nameOrId);
  } catch {
    return; // an unknown endpoint is told by the query itself; user endpoints read what their config gives
  }
  for (const source of sourcesReadBy(definition.sql.duckdb)) {
    if ((sources[source] ?? []).length === 0 && FLAGS[source]) io.stderr.write(`warning: no ${FLAGS[source]} given: ${definition.name} will answer no rows\n`);
  }
}
