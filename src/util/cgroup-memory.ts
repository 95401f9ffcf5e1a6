import { readFileSync } from 'node:fs';

/**
 * The memory limit of the container (cgroup) this process runs in, in bytes, or null when there is
 * none: cgroup v2's `memory.max` ("max" is none), else v1's `memory.limit_in_bytes` (a huge number
 * is none). Why: a process sized from the host's RAM is OOM-killed in a container that has less;
 * docker's `mem_limit` and Kubernetes' limits are read here.
 *
 * @example
 * cgroupMemoryMax(); // 1073741824 in a container started with --memory 1g, null on a bare host
 */
export function cgroupMemoryMax(read: (path: string) => string | null = readOrNull): number | null {
  const v2 = read('/sys/fs/cgroup/memory.max')?.trim();
  if (v2 !== undefined) return v2 === 'max' || !/^\d+$/.test(v2) ? null : Number(v2);
  const v1 = read('/sys/fs/cgroup/memory/memory.limit_in_bytes')?.trim();
  // v1 writes "no limit" as the largest page-aligned 64-bit number (about 9.2e18).
  if (v1 === undefined || !/^\d+$/.test(v1) || Number(v1) >= 2 ** 62) return null;
  return Number(v1);
}

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
