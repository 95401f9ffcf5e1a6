import { createHash } from 'node:crypto';

/** The namespace of derived endpoint UUIDs: fixed forever, so a name always gives the same UUID. */
const NAMESPACE = Buffer.from('6f1d2c1e8a8f4c5e9b0e7d3c2a1b0f9e', 'hex');

/** A UUID v5 (RFC 9562) of the name: stable in every installation and every version. */
export function uuidFromName(name: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
