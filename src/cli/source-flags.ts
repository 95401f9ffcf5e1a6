import { parseArgs } from 'node:util';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { BUILT_IN_SOURCE_SET } from '../sources/built-ins';
import type { SourceSet } from '../sources/source-set';
import { UsageError } from './usage-error';

/**
 * The command line's names of sources, all derived from the instance's source set (the built-ins
 * and a `--config`'s `sourceDefinitions`): the generic forms `--source <name>=<glob>` (serve,
 * query), `--source <name>` (compact, clickhouse load, ingest) and `--table <name>=<table>`
 * (clickhouse), where a source is named by its name, its relation or its alias, plus each
 * descriptor's own flags (`cli.flag`: `--edge-logs <glob>`; `cli.tableFlag`: `--edge-table`).
 */

/** The `--config` of an argv, read before the command's own options (they depend on its sources). */
export function configPathOf(argv: readonly string[]): string | undefined {
  const { values } = parseArgs({ args: [...argv], options: { config: { type: 'string' } }, strict: false, allowPositionals: true });
  return typeof values.config === 'string' ? values.config : undefined;
}

/** The sources of a command: the built-ins and its `--config`'s `sourceDefinitions`. */
export function sourceSetOf(config: { sourceDefinitions?: unknown }): SourceSet {
  return BUILT_IN_SOURCE_SET.extend(config.sourceDefinitions);
}

/** The parseArgs options of the descriptors' glob flags (`--edge-logs <glob>`, repeatable). */
export function globFlagOptions(sources: SourceSet): Record<string, { type: 'string'; multiple: true }> {
  return Object.fromEntries(sources.list.filter((d) => d.cli.flag).map((d) => [d.cli.flag!, { type: 'string', multiple: true }]));
}

/** The parseArgs options of the descriptors' table flags (`--edge-table <name>`). */
export function tableFlagOptions(sources: SourceSet): Record<string, { type: 'string' }> {
  return Object.fromEntries(sources.list.filter((d) => d.cli.tableFlag).map((d) => [d.cli.tableFlag!, { type: 'string' }]));
}

/** A source's names on the command line, for help and errors: `edgeLogs (edge_logs, edge)`. */
export function sourceLabel(d: SourceDescriptor): string {
  return `${d.name} (${[d.relation, ...(d.cli.alias ? [d.cli.alias] : [])].join(', ')})`;
}

/** Every choice of `--source`, for help and errors. */
export function sourceChoices(sources: SourceSet): string {
  return sources.list.map(sourceLabel).join(', ');
}

/** The source a `--source` value names (name, relation or alias); a usage error listing them otherwise. */
export function sourceFromCli(command: string, text: string | undefined, sources: SourceSet, flag = '--source'): SourceDescriptor {
  const found = text === undefined ? undefined : sources.fromCli(text);
  if (!found) throw new UsageError(`${flag} must name a source: ${sourceChoices(sources)}${text === undefined ? '' : `, not "${text}"`}.`, command);
  return found;
}

/**
 * `<source>=<value>` pairs of a generic flag (`--source auth_logs=logs/*.ndjson`, `--table
 * authLogs=auth`), by source name, in the order given; a pair without `=` or naming no source is a
 * usage error.
 */
export function pairsBySource(command: string, flag: string, pairs: readonly string[] | undefined, sources: SourceSet): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || eq === pair.length - 1) throw new UsageError(`--${flag} takes <source>=<value>, e.g. --${flag} ${sources.list[0]!.relation}=..., not "${pair}".`, command);
    const source = sourceFromCli(command, pair.slice(0, eq), sources, `--${flag} <source>=`);
    out.set(source.name, [...(out.get(source.name) ?? []), pair.slice(eq + 1)]);
  }
  return out;
}

/** The globs the command line gives each source: `--source <source>=<glob>` and the descriptors' flags, together. */
export function globsOfFlags(command: string, values: Readonly<Record<string, unknown>>, sources: SourceSet): Map<string, string[]> {
  const out = pairsBySource(command, 'source', values.source as string[] | undefined, sources);
  for (const d of sources.list) {
    const given = d.cli.flag ? (values[d.cli.flag] as string[] | undefined) : undefined;
    if (given?.length) out.set(d.name, [...(out.get(d.name) ?? []), ...given]);
  }
  return out;
}

/**
 * Some logs must be given (unless `optional`: a data dir keeps them): a usage error saying how
 * otherwise, with the sources' own flags.
 */
export function requireSomeGlobs(command: string, globs: Readonly<Record<string, readonly string[]>>, sources: SourceSet, optional: boolean): void {
  if (optional || Object.values(globs).some((g) => g.length > 0)) return;
  const flags = sources.list.filter((d) => d.cli.flag).map((d) => `--${d.cli.flag} <glob>`);
  throw new UsageError(`Give the logs to read: --source <source>=<glob>${flags.length ? ` (or ${flags.join(', ')})` : ''}, or a --config with sources.`, command);
}

/** The help lines that list the sources: every one, its names, and its own flags. */
export function sourcesHelp(sources: SourceSet, what: 'globs' | 'names' | 'tables'): string {
  const lines = sources.list.map((d) => {
    const flag = what === 'globs' ? d.cli.flag && `, --${d.cli.flag} <glob>` : what === 'tables' ? d.cli.tableFlag && `, --${d.cli.tableFlag} <name>` : '';
    return `  ${sourceLabel(d)}${flag || ''}${d.description ? `: ${d.description}` : ''}`;
  });
  return `Sources (named by name, table or alias${sources.list.length > BUILT_IN_SOURCE_SET.list.length ? '; those of --config included' : '; --config adds yours'}):\n${lines.join('\n')}\n`;
}
