/**
 * One memory budget for the process (docs/operations.md, "Memory"): where it comes from, the
 * share each DuckDB gets, the container's limit read from cgroup v2 or v1, and compactions that
 * take turns.
 */
import { describe, expect, it } from 'vitest';
import { COMPACTION_SHARE, DEFAULT_BUDGET_BYTES, describeBudget, memoryBudget, QUERY_SHARE } from '../src/duckdb/memory-budget';
import { memoryLimitBytes } from '../src/duckdb/open-database';
import { cgroupMemoryMax } from '../src/util/cgroup-memory';
import { oneAtATime } from '../src/util/one-at-a-time';

const MIB = 2 ** 20;

describe('the memory budget', () => {
  it('is 512 MiB by default, on a host without a container limit or inside a larger one', () => {
    for (const container of [null, 4 * 1024 * MIB, 1024 * MIB]) {
      expect(memoryBudget(undefined, container, 2)).toMatchObject({ bytes: DEFAULT_BUDGET_BYTES, origin: 'default' });
    }
  });

  it("is 75 % of the container's limit when that is smaller than the default", () => {
    expect(memoryBudget(undefined, 512 * MIB, 2)).toMatchObject({ bytes: 384 * MIB, origin: 'container' });
  });

  it('is the option when given, whatever the container says', () => {
    expect(memoryBudget('1GB', 256 * MIB, 2)).toMatchObject({ bytes: 1e9, origin: 'option' });
  });

  it('gives the queries 40 % and one compaction 15 %, each on threads that fit 128 MiB apiece', () => {
    const budget = memoryBudget('2GB', null, 8);
    expect(memoryLimitBytes(budget.queries.memoryLimit)).toBe(Math.floor((2e9 * QUERY_SHARE) / 1e6) * 1e6);
    expect(memoryLimitBytes(budget.compaction.memoryLimit)).toBe(Math.floor((2e9 * COMPACTION_SHARE) / 1e6) * 1e6);
    expect(budget.queries.threads).toBe(5);
    expect(budget.compaction.threads).toBe(1);
    expect(budget.memoryTablesBytes).toBe(Math.floor(2e9 * 0.08));
    // Never more threads than cores, and at least one.
    expect(memoryBudget('2GB', null, 2).queries.threads).toBe(2);
    expect(memoryBudget('128MB', null, 2).queries.threads).toBe(1);
  });

  it('is said in words as serve prints it', () => {
    expect(describeBudget(memoryBudget(undefined, null, 2))).toBe('512 MiB (default; DuckDB: queries 214MB on 1 thread, compaction 80MB)');
    expect(describeBudget(memoryBudget(undefined, 256 * MIB, 2))).toMatch(/^192 MiB \(75 % of the container's limit;/);
  });
});

describe("the container's memory limit", () => {
  const files = (map: Record<string, string>) => (path: string) => map[path] ?? null;

  it('is cgroup v2 memory.max, and none when it says max', () => {
    expect(cgroupMemoryMax(files({ '/sys/fs/cgroup/memory.max': '1073741824\n' }))).toBe(1073741824);
    expect(cgroupMemoryMax(files({ '/sys/fs/cgroup/memory.max': 'max\n' }))).toBeNull();
  });

  it("is cgroup v1's limit_in_bytes, and none when it is v1's 'unlimited' number", () => {
    expect(cgroupMemoryMax(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '536870912\n' }))).toBe(536870912);
    expect(cgroupMemoryMax(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n' }))).toBeNull();
  });

  it('is none outside any cgroup', () => {
    expect(cgroupMemoryMax(files({}))).toBeNull();
  });
});

describe('a lane (compactions take turns)', () => {
  it('runs one piece of work at a time, in order, and a failure does not stop the next', async () => {
    const lane = oneAtATime();
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const work =
      (name: string, fail = false) =>
      async () => {
        most = Math.max(most, ++running);
        log.push(`start ${name}`);
        await new Promise((r) => setImmediate(r));
        log.push(`end ${name}`);
        running--;
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([lane(work('a')), lane(work('b', true)), lane(work('c'))]);
    expect(most).toBe(1);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
