import type { AnyEndpointDefinition } from '../definitions/definition';

/**
 * Each definition as an instance runs it, made once per definition (the options do not change):
 * the parameters it accepts and ignores, bound as NULL, with why (the project with
 * `singleProject`, the tier with `tierWindow: false`), and the definition with those parameters
 * optional and described as ignored.
 *
 * @example
 * const inForce = new DefinitionsInForce({ singleProject: true });
 * inForce.ignored(logsAll); // Map { 'project' => 'this server holds a single project' }
 * inForce.of(logsAll).params.find((p) => p.name === 'project')?.required; // false
 */
export class DefinitionsInForce {
  readonly #inForce = new WeakMap<AnyEndpointDefinition, AnyEndpointDefinition>();
  readonly #ignored = new WeakMap<AnyEndpointDefinition, ReadonlyMap<string, string>>();

  constructor(private readonly options: { singleProject?: boolean; tierWindow?: boolean }) {}

  /** The definition as this instance runs it. */
  of(definition: AnyEndpointDefinition): AnyEndpointDefinition {
    let inForce = this.#inForce.get(definition);
    if (inForce === undefined) {
      const ignored = this.ignored(definition);
      inForce =
        ignored.size === 0
          ? definition
          : {
              ...definition,
              params: definition.params.map((p) => (ignored.has(p.name) ? { ...p, required: false, description: `${p.description} Ignored: ${ignored.get(p.name)}.`.trim() } : p)),
            };
      this.#inForce.set(definition, inForce);
    }
    return inForce;
  }

  /** The parameters this instance accepts and ignores, with why. */
  ignored(definition: AnyEndpointDefinition): ReadonlyMap<string, string> {
    let ignored = this.#ignored.get(definition);
    if (ignored === undefined) {
      const found = new Map<string, string>();
      if (this.options.singleProject && definition.projectParam !== undefined) found.set(definition.projectParam, 'this server holds a single project');
      if (this.options.tierWindow === false && definition.tierParam !== undefined) found.set(definition.tierParam, 'this server keeps no tier window');
      this.#ignored.set(definition, (ignored = found));
    }
    return ignored;
  }
}
