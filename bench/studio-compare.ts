import type { StudioCase } from './studio-cases';

/**
 * Whether two engines answered a Studio case the same (bench/studio-cases.ts, `AnswerShape`):
 * null when they did, else what differs. Values are normalized first: timestamps and counts to
 * numbers (ClickHouse quotes 64-bit integers, Postgres returns a `timestamp` as microseconds via
 * the bench's parser), a missing group value and `NULL` alike.
 */
export function answerDifference(
  c: Pick<StudioCase, 'shape' | 'groupBy' | 'countColumn'>,
  ours: ReadonlyArray<Record<string, unknown>>,
  theirs: ReadonlyArray<Record<string, unknown>>,
): string | null {
  switch (c.shape) {
    case 'count': {
      const [a, b] = [Number(ours[0]?.count), Number(theirs[0]?.count)];
      return a === b ? null : `count ${a} vs ${b}`;
    }
    case 'rows': {
      if (ours.length !== theirs.length) return `${ours.length} rows vs ${theirs.length}`;
      const times = (rows: ReadonlyArray<Record<string, unknown>>) => rows.map((r) => Number(r.timestamp));
      const [ta, tb] = [times(ours), times(theirs)];
      const at = ta.findIndex((t, i) => t !== tb[i]);
      if (at >= 0) return `row ${at}: timestamp ${ta[at]} vs ${tb[at]}`;
      // Rows tied at the last timestamp may be cut anywhere by the limit: ids compared above it, as sets.
      const last = ta.at(-1);
      const ids = (rows: ReadonlyArray<Record<string, unknown>>) =>
        rows
          .filter((r) => Number(r.timestamp) !== last || rows.length < 100)
          .map((r) => String(r.id))
          .sort();
      const [ia, ib] = [ids(ours), ids(theirs)];
      const differs = ia.findIndex((id, i) => id !== ib[i]);
      return differs >= 0 || ia.length !== ib.length ? `ids differ (${ia[differs]} vs ${ib[differs]})` : null;
    }
    case 'buckets': {
      const sum = (rows: ReadonlyArray<Record<string, unknown>>) => {
        const out = new Map<number, string>();
        const acc = new Map<number, [number, number, number]>();
        for (const r of rows) {
          const k = Number(r.timestamp);
          const v = acc.get(k) ?? [0, 0, 0];
          acc.set(k, [v[0] + Number(r.ok_count), v[1] + Number(r.error_count), v[2] + Number(r.warning_count)]);
        }
        for (const [k, v] of acc) out.set(k, v.join('/'));
        return out;
      };
      const [a, b] = [sum(ours), sum(theirs)];
      if (a.size !== b.size) return `${a.size} buckets vs ${b.size}`;
      for (const [k, v] of a) if (b.get(k) !== v) return `bucket ${k}: ${v} vs ${b.get(k) ?? 'missing'} (ok/error/warning)`;
      return null;
    }
    case 'top': {
      const count = c.countColumn!;
      if (ours.length !== theirs.length) return `${ours.length} groups vs ${theirs.length}`;
      const counts = (rows: ReadonlyArray<Record<string, unknown>>) => rows.map((r) => Number(r[count]));
      const [ca, cb] = [counts(ours), counts(theirs)];
      const at = ca.findIndex((n, i) => n !== cb[i]);
      if (at >= 0) return `group ${at}: ${count} ${ca[at]} vs ${cb[at]}`;
      const least = ca.at(-1);
      const keys = (rows: ReadonlyArray<Record<string, unknown>>) =>
        rows
          .filter((r) => Number(r[count]) !== least || rows.length < 100)
          .map((r) => c.groupBy!.map((g) => String(r[g] ?? '')).join('\u0001'))
          .sort();
      const [ka, kb] = [keys(ours), keys(theirs)];
      const differs = ka.findIndex((k, i) => k !== kb[i]);
      return differs >= 0 ? `groups differ (${JSON.stringify(ka[differs])} vs ${JSON.stringify(kb[differs])})` : null;
    }
  }
}
