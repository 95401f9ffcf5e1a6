import { describe, expect, it } from 'vitest';
import { shapeLogflareRows, toLogflareWire } from '../src/rows/logflare-wire';
import { shapeRows } from '../src/rows/shape-rows';

describe("Logflare's wire format (docs/supabase.md)", () => {
  const columns = [
    { name: 'id', type: 'text' as const },
    { name: 'timestamp', type: 'timestamp' as const },
    { name: 'metadata', type: 'json' as const },
    { name: 'n', type: 'integer' as const },
  ];

  it('turns timestamps into integers of unix microseconds, exactly', () => {
    const [row] = toLogflareWire(columns, [{ id: 'a', timestamp: '2026-11-21T10:15:02.123456Z', metadata: null, n: 1 }]);
    expect(row).toEqual({ id: 'a', timestamp: 1795256102123456, metadata: null, n: 1 });
    // Studio tells a microsecond timestamp by its 16 digits.
    expect(String(row!.timestamp)).toHaveLength(16);
    expect(toLogflareWire(columns, [{ id: 'b', timestamp: '1970-01-01T00:00:00.000001Z', metadata: null, n: 0 }])[0]!.timestamp).toBe(1);
    expect(toLogflareWire(columns, [{ id: 'c', timestamp: null, metadata: null, n: 0 }])[0]!.timestamp).toBeNull();
  });

  it('wraps every object in a one-element array, recursively; arrays stay arrays and their objects are records', () => {
    const metadata = {
      request: { method: 'GET', headers: { user_agent: 'curl' }, search: null },
      context: [{ host: 'h', pid: 1, nested: { a: 1 } }, 'text', [1, { b: 2 }]],
      status: 200,
      empty: {},
    };
    const [row] = toLogflareWire(columns, [{ id: 'a', timestamp: null, metadata, n: null }]);
    expect(row!.metadata).toEqual([
      {
        request: [{ method: 'GET', headers: [{ user_agent: 'curl' }], search: null }],
        context: [{ host: 'h', pid: 1, nested: [{ a: 1 }] }, 'text', [1, { b: 2 }]],
        status: 200,
        empty: [{}],
      },
    ]);
    // What Studio's detail panel reads.
    expect((row!.metadata as any)[0].request[0].headers[0].user_agent).toBe('curl');
  });

  it('leaves the input rows untouched and passes other columns through', () => {
    const input = { id: 'a', timestamp: '2026-11-21T10:15:02.000000Z', metadata: { x: { y: 1 } }, n: 5 };
    const copy = structuredClone(input);
    toLogflareWire(columns, [input]);
    expect(input).toEqual(copy);
    const plain = [{ a: 'x', b: 2 }];
    expect(
      toLogflareWire(
        [
          { name: 'a', type: 'text' },
          { name: 'b', type: 'integer' },
        ],
        plain,
      ),
    ).toBe(plain);
  });

  it('a JSON scalar or array column keeps its value', () => {
    const cols = [{ name: 'v', type: 'json' as const }];
    expect(toLogflareWire(cols, [{ v: 'GET' }, { v: 3 }, { v: [1, 2] as never }, { v: null }]).map((r) => r.v)).toEqual(['GET', 3, [1, 2], null]);
  });

  it('engine rows shaped straight into it are the rows shaped, then turned into it (no ISO text in between)', () => {
    const all = [
      { name: 'id', type: 'text' as const, description: '' },
      { name: 'timestamp', type: 'timestamp' as const, description: '' },
      { name: 'metadata', type: 'json' as const, description: '' },
      { name: 'n', type: 'integer' as const, description: '' },
      { name: 'x', type: 'float' as const, description: '' },
      { name: 'ok', type: 'boolean' as const, description: '' },
    ];
    const micros = [
      0n,
      1n,
      -1n,
      1_795_255_202_123_456n,
      // Years 1 and 9999, their first and last microsecond, and past them (ISO text there reads back otherwise).
      -62_135_596_800_000_000n,
      -62_135_596_800_000_001n,
      253_402_300_799_999_999n,
      253_402_300_800_000_000n,
      // Past 2^53: the number the wire holds is the nearest double, as before.
      9_007_199_254_740_993n,
      Number(1_795_255_202_123_456n),
    ];
    const rows = micros.map((t, i) => ({
      id: `r${i}`,
      timestamp: t,
      metadata: i % 2 ? '{"request":{"path":"/","headers":[{"a":1}]},"n":12345678901234567890}' : null,
      n: BigInt(i),
      x: i / 3,
      ok: i % 2 === 0,
    }));
    rows.push({ id: 'nulls', timestamp: null as never, metadata: '[1,{"b":2}]', n: null as never, x: null as never, ok: null as never });
    expect(shapeLogflareRows(all, rows)).toEqual(toLogflareWire(all, shapeRows(all, rows)));
    expect(shapeLogflareRows(all, rows).map((r) => Object.keys(r))).toEqual(toLogflareWire(all, shapeRows(all, rows)).map((r) => Object.keys(r)));
    expect(shapeLogflareRows([{ name: 'id', type: 'text' }], [{ id: 'a' }])).toEqual([{ id: 'a' }]);
  });
});
