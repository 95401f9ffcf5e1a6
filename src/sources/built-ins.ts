import { edgeLogs } from './edge-logs';
import { functionEdgeLogs } from './function-edge-logs';
import { SourceSet } from './source-set';

export { edgeLogs, functionEdgeLogs };

/**
 * The sources every instance knows (descriptors made with `defineSource`, like a user's). Adding
 * one is its descriptor file, a line here and its entry in the demo-data generator (the type check
 * asks for it; docs/architecture.md): the command line, ingest names, managed storage, compaction
 * and the ClickHouse tables follow from the set.
 */
export const BUILT_IN_SOURCES = [edgeLogs, functionEdgeLogs] as const;

/** The names of the built-in sources. */
export type BuiltInSourceName = (typeof BUILT_IN_SOURCES)[number]['name'];

/** The built-in sources as a set: what every instance starts from, and the default of `compactLogs` and the ClickHouse engine. */
export const BUILT_IN_SOURCE_SET = SourceSet.of(BUILT_IN_SOURCES);
