import { InvalidOptionError } from '../errors';
import type { SourceDescriptor, SourceName } from './source-descriptor';
import { withTypedPaths } from './typed-fields';

/** The relations a source presents to SQL: its own and its rollups'. */
export function relationsOf(d: SourceDescriptor): string[] {
  return [d.relation, ...Object.keys(d.rollups)];
}

/**
 * The log sources of one instance (the built-ins, a preset's, the user's), made once from their
 * descriptors and passed to everything that needs them: the engines, ingest, managed storage,
 * compaction and the command line. Every name a source goes by is unique in a set, checked when it
 * is made: its name, its relations (rollups' included), its Logflare names (in any letter case),
 * its UUID and its command-line names. Look-ups are map hits.
 *
 * @example
 * const sources = BUILT_IN_SOURCE_SET.extend([authLogs]);
 * sources.get('authLogs').relation;             // 'auth_logs'
 * sources.byLogflareName('GOTRUE.logs.prod');   // authLogs
 */
export class SourceSet {
  /** The descriptors, in order (built-ins first). */
  readonly list: readonly SourceDescriptor[];
  /** Their names, in the same order. */
  readonly names: readonly SourceName[];
  private readonly byName = new Map<string, SourceDescriptor>();
  /** Names the command line takes for a source: its name, its relation, its alias. */
  private readonly byCliName = new Map<string, SourceDescriptor>();
  /** Lower-case Logflare names and UUIDs. */
  private readonly byLogflare = new Map<string, SourceDescriptor>();
  private readonly byRelation = new Map<string, SourceDescriptor>();
  private readonly byFlag = new Map<string, SourceDescriptor>();

  private constructor(entries: ReadonlyArray<{ descriptor: SourceDescriptor; option: string }>) {
    const list: SourceDescriptor[] = [];
    for (const { descriptor: d, option } of entries) {
      // The same descriptor twice (a preset naming a built-in) is one source.
      if (this.byName.get(d.name) === d) continue;
      const claims: Array<[Map<string, SourceDescriptor>, string, string]> = [
        [this.byName, d.name, `name "${d.name}"`],
        ...relationsOf(d).map((r): [Map<string, SourceDescriptor>, string, string] => [this.byRelation, r, `relation "${r}"`]),
        ...[...d.logflare.names, d.logflare.id].map((n): [Map<string, SourceDescriptor>, string, string] => [this.byLogflare, n.toLowerCase(), `Logflare name or UUID "${n}"`]),
        ...[d.name, d.relation, ...(d.cli.alias ? [d.cli.alias] : [])].map((n): [Map<string, SourceDescriptor>, string, string] => [this.byCliName, n, `command-line name "${n}"`]),
        ...[d.cli.flag, d.cli.tableFlag].filter((f): f is string => f !== undefined).map((f): [Map<string, SourceDescriptor>, string, string] => [this.byFlag, f, `flag --${f}`]),
      ];
      for (const [map, key, what] of claims) {
        const other = map.get(key);
        if (other) {
          throw new InvalidOptionError(option, `Source "${d.name}" shares its name, relation (or a rollup's), Logflare name, UUID or command-line name with source "${other.name}": ${what}.`);
        }
      }
      for (const [map, key] of claims) map.set(key, d);
      list.push(d);
    }
    this.list = Object.freeze(list);
    this.names = Object.freeze(list.map((d) => d.name));
  }

  /**
   * A set of these descriptors (a clash is an `InvalidOptionError` of `option`).
   *
   * @example
   * const builtIns = SourceSet.of([edgeLogs, functionEdgeLogs]);
   */
  static of(descriptors: readonly SourceDescriptor[], option = 'sources'): SourceSet {
    return new SourceSet(descriptors.map((descriptor) => ({ descriptor, option })));
  }

  /**
   * This set with more sources after its own: descriptors made with `defineSource`, checked (a
   * value that is not one, or a clash, is an `InvalidOptionError` of `option[i]`). Nothing to add
   * gives this very set.
   *
   * @example
   * const sources = BUILT_IN_SOURCE_SET.extend(options.sourceDefinitions);
   */
  extend(more: unknown, option = 'sourceDefinitions'): SourceSet {
    if (more === undefined) return this;
    if (!Array.isArray(more)) throw new InvalidOptionError(option, `${option} must be a list of sources made with defineSource().`);
    if (more.every((d) => this.byName.get((d as SourceDescriptor)?.name) === d)) return this;
    const added = more.map((d: unknown, i) => {
      const candidate = d as SourceDescriptor;
      if (!candidate || typeof candidate !== 'object' || typeof candidate.relation !== 'string' || !Array.isArray(candidate.columns) || typeof candidate.cli !== 'object') {
        throw new InvalidOptionError(`${option}[${i}]`, `${option}[${i}] is not a source: make it with defineSource().`);
      }
      return { descriptor: candidate, option: `${option}[${i}]` };
    });
    return new SourceSet([...this.list.map((descriptor) => ({ descriptor, option })), ...added]);
  }

  /**
   * This set with each source given the typed fields its stored events hold beyond those it
   * declares (`withTypedPaths`: a dataset's `typedPaths`). An instance's sets are made by its
   * `LiveSourceSet` (live-source-set.ts), one per growth, each read whole by the requests that
   * began with it. No source widened gives this very set.
   *
   * @example
   * const sources = declared.withTypedPaths((name) => readDatasetStateStable(datasetDir(dataDir, name)).typedPaths);
   */
  withTypedPaths(pathsOf: (name: SourceName) => readonly string[]): SourceSet {
    const list = this.list.map((d) => withTypedPaths(d, pathsOf(d.name)));
    if (list.every((d, i) => d === this.list[i])) return this;
    return SourceSet.of(list);
  }

  /** The source of this name, or undefined. */
  find(name: string): SourceDescriptor | undefined {
    return this.byName.get(name);
  }

  /** Whether a source has this name. */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The source of this name; an `InvalidOptionError` (`sources.<name>`) listing the names otherwise. */
  get(name: string): SourceDescriptor {
    const found = this.byName.get(name);
    if (!found)
      throw new InvalidOptionError(`sources.${name}`, `sources.${name} is not a log source; the sources are ${this.names.join(', ')} (declare more with defineSource and sourceDefinitions).`);
    return found;
  }

  /** The source a command line names: by its name, its relation or its alias (`edgeLogs`, `edge_logs`, `edge`). */
  fromCli(text: string): SourceDescriptor | undefined {
    return this.byCliName.get(text);
  }

  /** The source of a Logflare name or UUID, in any letter case (`postgREST.logs.prod` is `postgrest.logs.prod`). */
  byLogflareName(nameOrId: string): SourceDescriptor | undefined {
    return this.byLogflare.get(nameOrId.toLowerCase());
  }

  /** The source whose relation (or rollup) SQL reads under this name. */
  byRelationName(relation: string): SourceDescriptor | undefined {
    return this.byRelation.get(relation);
  }
}
