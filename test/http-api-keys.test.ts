import { describe, expect, it, vi } from 'vitest';

// Counts the sha256 digests the key check computes, to see which calls take the full path.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, createHash: vi.fn(actual.createHash) };
});

const crypto = await import('node:crypto');
const { createKeyCheck } = await import('../src/http/api-keys');
const hashes = vi.mocked(crypto.createHash);

describe('createKeyCheck', () => {
  it('accepts the configured keys and refuses others, before and after a key was remembered', () => {
    const check = createKeyCheck(['alpha-key', 'beta-key']);
    for (let round = 0; round < 3; round++) {
      expect(check('alpha-key')).toBe(true);
      expect(check('beta-key')).toBe(true);
      expect(check('alpha-ke')).toBe(false);
      expect(check('alpha-key2')).toBe(false);
      expect(check('ALPHA-KEY')).toBe(false);
      expect(check('')).toBe(false);
      expect(check(null)).toBe(false);
    }
  });

  it('hashes a valid key once, and every wrong key each time (the constant-time path)', () => {
    const check = createKeyCheck(['secret']);
    hashes.mockClear();
    for (let i = 0; i < 5; i++) expect(check('secret')).toBe(true);
    expect(hashes).toHaveBeenCalledTimes(1);
    hashes.mockClear();
    for (let i = 0; i < 5; i++) expect(check('secreT')).toBe(false);
    expect(hashes).toHaveBeenCalledTimes(5);
  });

  it('remembers no more keys than are configured', () => {
    const check = createKeyCheck([]);
    hashes.mockClear();
    expect(check('anything')).toBe(false);
    expect(check('anything')).toBe(false);
    expect(hashes).toHaveBeenCalledTimes(2);
  });
});
