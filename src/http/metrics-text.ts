import { readFileSync } from 'node:fs';
import type { EndpointsStats } from '../api/public-types';
import type { DrainStats } from '../drains/forwarder';

/** One metric: its name, type, help, and its samples (labels and value). */
interface Metric {
  name: string;
  type: 'gauge' | 'counter';
  help: string;
  samples: Array<{ labels?: Record<string, string>; value: number }>;
}

/**
 * An instance's stats in Prometheus' text exposition format (version 0.0.4), as `GET /metrics`
 * answers it (docs/operations.md, "Metrics"). `peakResidentBytes` is the kernel's high-water mark
 * (VmHWM), null where /proc is not there. `drains`: each log drain's counters, labelled by its id, name and type.
 *
 * @example
 * metricsText(ep.stats()); // '# HELP log_endpoints_memory_budget_bytes ...\n...'
 */
export function metricsText(stats: EndpointsStats, peakResidentBytes: number | null = peakResident(), drains: readonly DrainStats[] = []): string {
  const storage = stats.storage;
  const perInstance = (pick: (d: EndpointsStats['memory']['duckdb'][number]) => number) => stats.memory.duckdb.map((d) => ({ labels: { instance: d.instance }, value: pick(d) }));
  const metrics: Metric[] = [
    gauge('memory_budget_bytes', 'The process memory budget (--memory-limit).', stats.memory.budgetBytes),
    gauge('resident_bytes', 'Resident memory of the process now (VmRSS).', stats.memory.residentBytes),
    ...(peakResidentBytes === null ? [] : [gauge('resident_peak_bytes', 'Highest resident memory since the start (VmHWM).', peakResidentBytes)]),
    gauge('heap_bytes', "V8's heap (JavaScript objects).", stats.memory.heapBytes),
    gauge('external_bytes', "JavaScript's buffers outside V8's heap.", stats.memory.externalBytes),
    ...(stats.memory.duckdb.length === 0
      ? []
      : ([
          { name: 'duckdb_memory_bytes', type: 'gauge', help: 'Bytes a DuckDB instance holds in its buffer pool, by its role.', samples: perInstance((d) => d.memoryBytes) },
          {
            name: 'duckdb_memory_tag_bytes',
            type: 'gauge',
            help: "Of those, bytes by DuckDB's own tag (duckdb_memory()): tables, caches, a query's hash tables and sorts.",
            samples: stats.memory.duckdb.flatMap((d) => Object.entries(d.tagBytes).map(([tag, value]) => ({ labels: { instance: d.instance, tag }, value }))),
          },
          { name: 'duckdb_temporary_bytes', type: 'gauge', help: 'Bytes a DuckDB instance spilled to its temporary directory, by its role.', samples: perInstance((d) => d.temporaryBytes) },
        ] satisfies Metric[])),
    counter('ingested_events_total', 'Events acknowledged.', stats.ingestedEvents),
    counter('repeated_events_total', 'Events acknowledged again without being stored (a retried body).', stats.repeatedEvents),
    counter('queries_total', 'Engine queries run (cache misses and warming).', stats.engineQueries),
    counter('cache_hits_total', 'Answers served from the cache.', stats.cacheHits),
    {
      name: 'refusals_total',
      type: 'counter',
      help: 'Calls answered with an error, by its code.',
      samples: Object.entries(stats.refusals).map(([code, value]) => ({ labels: { code }, value })),
    },
  ];
  if (storage) {
    const perSource = (pick: (s: { walBytes: number; lagBytes: number }) => number) => Object.entries(storage.sources).map(([source, s]) => ({ labels: { source }, value: pick(s) }));
    metrics.push(
      gauge('memory_tables_bytes', 'NDJSON bytes of the newest events held in memory.', storage.memoryTablesBytes),
      { name: 'wal_bytes', type: 'gauge', help: 'Bytes in the write-ahead log.', samples: perSource((s) => s.walBytes) },
      { name: 'compaction_lag_bytes', type: 'gauge', help: 'Closed write-ahead bytes not yet compacted.', samples: perSource((s) => s.lagBytes) },
      gauge('settled', '1 when every acknowledged event is compacted and counted (no write-ahead bytes, no run mid-way) and nothing is recovering.', storage.settled ? 1 : 0),
      counter('compaction_failures_total', 'Failed compaction runs (each is retried).', storage.compactionFailures),
      counter('compacted_events_total', "Events compaction's runs wrote into the dataset (each once).", storage.compactedEvents),
      counter('merged_events_total', "Events merges of a day's files wrote again (once per merge): over compacted_events_total, the rewrites per event.", storage.mergedEvents),
    );
  }
  if (drains.length > 0) {
    const perDrain = (pick: (d: DrainStats) => number) => drains.map((d) => ({ labels: { drain: String(d.id), name: d.name, type: d.type }, value: pick(d) }));
    metrics.push(
      { name: 'drain_sent_events_total', type: 'counter', help: 'Events a log drain received (2xx).', samples: perDrain((d) => d.sent) },
      { name: 'drain_dropped_events_total', type: 'counter', help: 'Events given up for a log drain (its kept backlog past its bound, or refused with a 4xx).', samples: perDrain((d) => d.dropped) },
      { name: 'drain_failures_total', type: 'counter', help: 'Failed attempts at sending to a log drain.', samples: perDrain((d) => d.failures) },
      { name: 'drain_backlog_bytes', type: 'gauge', help: 'Write-ahead bytes (kept segments included) a log drain has yet to read.', samples: perDrain((d) => d.backlogBytes) },
    );
  }
  return metrics.map(render).join('');
}

function gauge(name: string, help: string, value: number): Metric {
  return { name, type: 'gauge', help, samples: [{ value }] };
}

function counter(name: string, help: string, value: number): Metric {
  return { name, type: 'counter', help, samples: [{ value }] };
}

function render(metric: Metric): string {
  const name = `log_endpoints_${metric.name}`;
  const lines = [`# HELP ${name} ${metric.help}`, `# TYPE ${name} ${metric.type}`];
  for (const { labels, value } of metric.samples) {
    const text = labels
      ? `{${Object.entries(labels)
          .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
          .join(',')}}`
      : '';
    lines.push(`${name}${text} ${value}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A label value as the format writes it: backslash, double quote and newline escaped. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function peakResident(): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}
