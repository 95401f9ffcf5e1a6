import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
/** The fenced code blocks of the README. */
const blocks = [...README.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }));

describe('README', () => {
  it('links to nothing outside the repository', () => {
    expect(README).not.toMatch(/\]\(\.\.\//);
    expect(README).not.toMatch(/\.\.\/shared|shared\/spec/);
  });

  it('uses the log folders demo-data writes (logs/edge/, logs/functions/) and their compacted twins', () => {
    // A folder, not a URL path such as http://localhost:3000/logs/dashboard (a base path).
    const folders = new Set(blocks.flatMap(({ code }) => [...code.matchAll(/(?<![\w/])logs\/([\w-]+)/g)].map((m) => m[1]!)));
    expect([...folders].sort()).toEqual(['edge', 'edge-parquet', 'functions', 'functions-parquet']);
  });

  it('shows the Redis client with an error listener before it connects', () => {
    const redis = blocks.find(({ code }) => code.includes('redisCache({ client'))!.code;
    expect(redis.indexOf("client.on('error'")).toBeGreaterThan(-1);
    expect(redis.indexOf("client.on('error'")).toBeLessThan(redis.indexOf('client.connect()'));
  });

  it('shows both test commands', () => {
    expect(README).toContain('npm test ');
    expect(README).toContain('npm run test:integration');
  });
});
