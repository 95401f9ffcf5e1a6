/**
 * Run by test/locale-data.test.ts in a process of its own: every way JavaScript reaches ICU's locale
 * data (Intl's constructors, the `toLocale...` methods, `localeCompare`) is counted from before the
 * library is imported; then the library and its HTTP and Node adapters are imported, and the
 * library ingests into managed storage and answers an Explorer query and an endpoint. Prints, as
 * JSON, the ways that were used (none: docs/ingest.md, "Footprint").
 */
const used: string[] = [];

for (const name of ['DateTimeFormat', 'NumberFormat', 'Collator', 'PluralRules', 'RelativeTimeFormat', 'ListFormat', 'DisplayNames', 'Segmenter'] as const) {
  const Original = Intl[name] as unknown as new (...args: unknown[]) => object;
  if (typeof Original !== 'function') continue;
  (Intl as unknown as Record<string, unknown>)[name] = new Proxy(Original, {
    construct(target, args) {
      used.push(`Intl.${name}`);
      return Reflect.construct(target, args) as object;
    },
  });
}
const methods: [object, string][] = [
  [Date.prototype, 'toLocaleString'],
  [Date.prototype, 'toLocaleDateString'],
  [Date.prototype, 'toLocaleTimeString'],
  [Number.prototype, 'toLocaleString'],
  [BigInt.prototype, 'toLocaleString'],
  [Array.prototype, 'toLocaleString'],
  [String.prototype, 'localeCompare'],
  [String.prototype, 'toLocaleUpperCase'],
  [String.prototype, 'toLocaleLowerCase'],
];
for (const [prototype, name] of methods) {
  const original = (prototype as Record<string, (...args: unknown[]) => unknown>)[name]!;
  Object.defineProperty(prototype, name, {
    value(this: unknown, ...args: unknown[]) {
      used.push(name);
      return original.apply(this, args);
    },
  });
}

const { createEndpoints, supabasePreset } = await import('../../src/index');
await import('../../src/http');
await import('../../src/node');
const dataDir = process.argv[2]!;
const ep = await createEndpoints({ ...supabasePreset, storage: { dataDir }, now: () => new Date('2026-11-21T12:00:00Z'), cache: false });
try {
  await ep.ingest('cloudflare.logs.prod', [
    { id: 'a', timestamp: '2026-11-21T11:00:00Z', event_message: 'GET /rest/v1/ 200', metadata: [{ request: [{ method: 'GET', path: '/rest/v1/' }], response: [{ status_code: 200 }] }] },
  ]);
  const sql = 'select count(*) as n from edge_logs';
  await ep.query('logs.all' as string, { iso_timestamp_start: '2026-11-21T00:00:00Z', iso_timestamp_end: '2026-11-21T12:00:00Z' }, { sql });
  await ep.query('logs.all' as string, { iso_timestamp_start: '2026-11-21T00:00:00Z', iso_timestamp_end: '2026-11-21T12:00:00Z' });
} finally {
  await ep.close();
}
process.stdout.write(JSON.stringify([...new Set(used)]));

export {};
