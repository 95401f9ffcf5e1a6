import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * What a process's resident memory is made of, from a copy of its /proc/<pid>/smaps (bench/footprint.ts
 * keeps them with FOOTPRINT_SMAPS): file-backed mappings by file, anonymous ones by what maps them as far
 * as their shape tells (glibc's main heap, its other arenas' 64 MiB heaps, 8 MiB thread stacks, the rest).
 *
 *   npx tsx bench/smaps-parts.ts <before.smaps> <after.smaps>
 */

interface Mapping {
  start: number;
  end: number;
  perms: string;
  path: string;
  rssKiB: number;
}

function mappings(text: string): Mapping[] {
  const out: Mapping[] = [];
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      out.push({ start: parseInt(head[1]!, 16), end: parseInt(head[2]!, 16), perms: head[3]!, path: head[4]!.trim(), rssKiB: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && out.length) out[out.length - 1]!.rssKiB = Number(rss[1]);
  }
  return out;
}

const MiB = 2 ** 20;

/** The part of each mapping, by its file or, when anonymous, its shape. */
export function parts(text: string): Map<string, number> {
  const list = mappings(text);
  const sums = new Map<string, number>();
  const add = (part: string, kib: number) => sums.set(part, (sums.get(part) ?? 0) + kib);
  for (let i = 0; i < list.length; i++) {
    const m = list[i]!;
    if (m.path === '[heap]') add("glibc's main arena ([heap])", m.rssKiB);
    else if (m.path.startsWith('/')) add(`file: ${basename(m.path)}`, m.rssKiB);
    else if (m.path.startsWith('[')) add(m.path, m.rssKiB);
    else {
      // glibc's other arenas: 64 MiB-aligned heaps, the used part read-write and the rest reserved.
      const next = list[i + 1];
      const arena = m.start % (64 * MiB) === 0 && m.perms.startsWith('rw') && next && !next.path && next.perms === '---p' && next.start === m.end && next.end - m.start === 64 * MiB;
      const whole = m.start % (64 * MiB) === 0 && m.perms.startsWith('rw') && m.end - m.start === 64 * MiB;
      // A thread's stack: 8 MiB read-write after a reserved guard page.
      const prev = list[i - 1];
      const stack = m.end - m.start >= 8 * MiB - 4096 && m.end - m.start <= 8 * MiB && prev && prev.perms === '---p' && prev.end === m.start;
      add(arena || whole ? "glibc's other arenas" : stack ? 'thread stacks' : m.end - m.start < MiB ? 'anonymous, mappings under 1 MiB' : 'anonymous, mappings of 1 MiB and more', m.rssKiB);
    }
  }
  return sums;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [beforePath, afterPath] = process.argv.slice(2);
  const before = parts(readFileSync(beforePath!, 'utf8'));
  const after = parts(readFileSync(afterPath!, 'utf8'));
  const names = [...new Set([...before.keys(), ...after.keys()])].sort((a, b) => (after.get(b) ?? 0) - (before.get(b) ?? 0) - ((after.get(a) ?? 0) - (before.get(a) ?? 0)));
  const r = (kib: number) => (kib / 1024).toFixed(1);
  let total = [0, 0];
  process.stdout.write('| part | before (MiB) | after (MiB) | grown |\n|---|---:|---:|---:|\n');
  for (const name of names) {
    const [b, a] = [before.get(name) ?? 0, after.get(name) ?? 0];
    total = [total[0]! + b, total[1]! + a];
    if (Math.max(a, b) >= 256) process.stdout.write(`| ${name} | ${r(b)} | ${r(a)} | ${a - b >= 0 ? '+' : ''}${r(a - b)} |\n`);
  }
  process.stdout.write(`| all | ${r(total[0]!)} | ${r(total[1]!)} | +${r(total[1]! - total[0]!)} |\n`);
}
