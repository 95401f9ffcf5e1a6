// Preloaded (`node --import`) by the package test: prints `apache-arrow resolved` on stderr the
// moment any module asks for apache-arrow, so a test can tell whether importing loads it.
import { register } from 'node:module';

const hook = `
import { writeSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (specifier === 'apache-arrow') writeSync(2, 'apache-arrow resolved\\n');
  return result;
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
