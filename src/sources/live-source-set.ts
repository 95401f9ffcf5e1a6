import type { SourceName } from './source-descriptor';
import type { SourceSet } from './source-set';

/**
 * An instance's sources as its queries read them now: the declared set, each source widened by
 * the typed fields its datasets hold (their logs' `typedPaths`, src/sources/typed-fields.ts),
 * which grow while the instance runs (compaction discovers a path: docs/durability.md,
 * "Discovered fields"). Each growth is a new `SourceSet` (a new version): a request takes
 * `current` once and reads that one set from its translation to its run, and everything kept by
 * set or by text (the checked SQL, the BigQuery schema, the compiled statements, the prepared
 * statements, whose texts spell out the relations) is kept per version, so a request in flight
 * keeps the set it began with and the next one reads the new columns. A set only grows, within
 * `DISCOVERED_PATHS_LIMIT` per source.
 *
 * @example
 * const live = new LiveSourceSet(BUILT_IN_SOURCE_SET);
 * live.widen('edgeLogs', ['request.host']); // true: live.current.get('edgeLogs').typedFields ends with 'request.host'
 */
export class LiveSourceSet {
  #current: SourceSet;
  #version = 0;
  /** Per source, the paths already taken or left out (past the bound, not a path): most calls change nothing, cheaply. */
  readonly #seen = new Map<SourceName, Set<string>>();

  constructor(initial: SourceSet) {
    this.#current = initial;
  }

  /** The set in force: what a request starting now reads, from its translation to its run. */
  get current(): SourceSet {
    return this.#current;
  }

  /** How many times the set grew since the instance started (0: it reads what it declares). */
  get version(): number {
    return this.#version;
  }

  /**
   * Widens source `name` by `paths` (a dataset's `typedPaths`, any order, declared ones among
   * them); true when the set grew (a new version), false when it holds them already, when the
   * source is full (`DISCOVERED_PATHS_LIMIT`) or has no such name.
   */
  widen(name: SourceName, paths: readonly string[]): boolean {
    let seen = this.#seen.get(name);
    if (seen && paths.every((p) => seen!.has(p))) return false;
    const source = this.#current.find(name);
    if (!source) return false;
    if (!seen) this.#seen.set(name, (seen = new Set(source.typedFields)));
    for (const p of paths) seen.add(p);
    const next = this.#current.withTypedPaths((n) => (n === name ? paths : []));
    if (next === this.#current) return false;
    this.#current = next;
    this.#version++;
    return true;
  }
}
