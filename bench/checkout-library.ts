/**
 * Another checkout's code in this process, loaded from its own src/ (by path, as tsx runs it) beside
 * this one's, so that two builds are measured alternated in one process. A checkout of `.` (run from
 * this tree) is this tree's src/: the same modules as this checkout's imports.
 */
import { join, resolve } from 'node:path';

/** An instance of the library, as `createEndpoints` opens it. */
export type Library = Awaited<ReturnType<typeof import('../src/index')['createEndpoints']>>;

/**
 * A module of a checkout's src/, typed as this checkout's (`path` from src/, its `.ts` included).
 *
 * @example const { MemoryTables } = await sourceAt<typeof import('../src/managed/memory-tables')>(checkout, 'managed/memory-tables.ts');
 */
export async function sourceAt<M>(checkout: string, path: string): Promise<M> {
  return (await import(join(resolve(checkout), 'src', path))) as M;
}

/**
 * A checkout's library: its src/index.ts.
 *
 * @example const { createEndpoints } = await libraryAt('/path/to/other/checkout');
 */
export function libraryAt(checkout: string): Promise<typeof import('../src/index')> {
  return sourceAt<typeof import('../src/index')>(checkout, 'index.ts');
}
