/**
 * An endpoint's name as a method of `Endpoints`: each `.`, `-` or `_` starts a capital
 * (`usage.api-counts` is `ep.usageApiCounts`). The type and the function follow the same rule.
 */
export type MethodName<S extends string> = S extends `${infer A}.${infer B}`
  ? `${MethodName<A>}${Capitalize<MethodName<B>>}`
  : S extends `${infer A}-${infer B}`
    ? `${MethodName<A>}${Capitalize<MethodName<B>>}`
    : S extends `${infer A}_${infer B}`
      ? `${MethodName<A>}${Capitalize<MethodName<B>>}`
      : S;

/**
 * The method name of an endpoint name.
 *
 * @example
 * methodName('functions.invocation-stats'); // 'functionsInvocationStats'
 * methodName('requests.by_path'); // 'requestsByPath'
 */
export function methodName<S extends string>(name: S): MethodName<S> {
  const [first = '', ...rest] = name.split(/[.\-_]/);
  return (first + rest.map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('')) as MethodName<S>;
}
