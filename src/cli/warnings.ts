import { compileGlob } from '../storage/glob';
import { DirectoryCache, listGlob } from '../storage/list-glob';
import type { CliIO } from './io';
import { findDefinition } from '../definitions/registry';
import { QUERY_SOURCES } from '../engine/duckdb/duckdb-engine';

/** One line per glob that matches no log file: an empty answer is more often a typo than no logs. */
export function warnEmptyGlobs(io: CliIO, flag: string, globs: readonly string[] | undefined): void {
  const cache = new DirectoryCache();
  for (const glob of globs ?? []) {
    const listing = listGlob(compileGlob(glob), cache);
    if (listing.files.length === 0 && listing.datasets.length === 0) io.stderr.write(`warning: --${flag} '${glob}' matches no log file (.ndjson, .jsonl, .json, .gz, .zst, .parquet)\n`);
  }
}

const FLAGS = { edgeLogs: '--edge-logs', functionEdgeLogs: '--function-logs' } as const;
const ENDPOINTS = { edgeLogs: 'logs.all and usage.api-counts', functionEdgeLogs: 'functions.invocation-stats' } as const;

/** The query command was asked for an endpoint whose log was not given at all. */
export function warnMissingSource(io: CliIO, nameOrId: string, sources: { edgeLogs: readonly string[]; functionEdgeLogs: readonly string[] }): void {
  let source: keyof typeof FLAGS;
  try {
    source = QUERY_SOURCES[findDefinition(nameOrId).name];
  } catch {
    return; // an unknown endpoint is told by the query itself
  }
  if (sources[source].length === 0) io.stderr.write(`warning: no ${FLAGS[source]} given: ${ENDPOINTS[source]} will answer no rows\n`);
}
