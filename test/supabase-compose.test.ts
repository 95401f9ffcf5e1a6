import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { splitPage } from './support/markdown';

// The compose service docs/supabase.md gives is what the footprint bench runs (bench/footprint.ts
// reads its environment from the page): the allocator settings measured there stay in it, each
// in the form glibc reads when the process starts (docs/operations.md, "Memory").

const PAGE = readFileSync(fileURLToPath(new URL('../docs/supabase.md', import.meta.url)), 'utf8');

/** The environment of the `analytics` service in the page's first YAML block. */
function composeEnvironment(): Record<string, string> {
  const yaml = splitPage(PAGE).blocks.find((b) => b.lang === 'yaml' && b.code.includes('analytics:'))!.code;
  const section = /^ {4}environment:\n((?: {6}.*\n?)+)/m.exec(yaml)![1]!;
  const env: Record<string, string> = {};
  for (const line of section.split('\n')) {
    const m = /^ {6}([A-Z_]+):\s*"?([^"]*)"?\s*$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

describe("the documented compose service's allocator settings", () => {
  it('keeps two glibc arenas and fixes its trim and top-pad thresholds, so the dynamic mmap threshold stays off', () => {
    const env = composeEnvironment();
    expect(env.MALLOC_ARENA_MAX).toBe('2');
    // Any of the two set fixes glibc's thresholds (no raise after a large free); these are the values measured.
    expect(env.MALLOC_TRIM_THRESHOLD_).toBe('131072');
    expect(env.MALLOC_TOP_PAD_).toBe('0');
    expect(env.NODE_OPTIONS).toBe('--max-semi-space-size=2');
  });
});
