/** The entries of an object whose value is not undefined: flags given override a config's values, absent ones do not. */
export function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}
