import { generateLogs, type GeneratedLogs } from '../fixtures/generate-logs';
import { helpText } from './help';
import type { CliIO } from './io';
import { clockOf, integerOf, parseOptions } from './parse-options';
import { progressBar } from './progress-bar';
import { systemNow } from '../time/clock';

export const DEMO_DATA_OPTIONS = {
  out: { type: 'string' },
  events: { type: 'string' },
  days: { type: 'string' },
  projects: { type: 'string' },
  seed: { type: 'string' },
  now: { type: 'string' },
  parquet: { type: 'boolean' },
} as const;

/** The demo dataset of `demo-data` and `demo`, with the progress bar on stderr. */
export async function writeDemoData(io: CliIO, options: { out: string; events: number; days?: number; projects?: number; seed?: number; now: Date; parquet?: boolean }): Promise<GeneratedLogs> {
  const bar = progressBar(io.stderr, 'Writing demo logs');
  try {
    return await generateLogs({
      outDir: options.out,
      now: options.now,
      seed: options.seed,
      days: options.days,
      projects: options.projects,
      edgeEvents: options.events,
      functionEvents: Math.round(options.events / 2),
      formats: options.parquet ? ['ndjson', 'parquet'] : ['ndjson'],
      onProgress: bar.update,
    });
  } finally {
    bar.finish();
  }
}

/** `log-endpoints demo-data`: realistic logs leading up to now (or --now). */
export async function demoDataCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions('demo-data', argv, DEMO_DATA_OPTIONS);
  if (values.help) {
    io.stdout.write(helpText('demo-data')!);
    return 0;
  }
  const now = clockOf('demo-data', values.now)?.() ?? systemNow();
  const logs = await writeDemoData(io, {
    out: values.out ?? '.demo-data',
    events: integerOf('demo-data', 'events', values.events, 20_000, 0, 100_000_000),
    days: integerOf('demo-data', 'days', values.days, 7, 1, 3650),
    projects: integerOf('demo-data', 'projects', values.projects, 20, 1, 100_000),
    seed: integerOf('demo-data', 'seed', values.seed, 1, 0, 2 ** 31 - 1),
    now,
    parquet: values.parquet,
  });
  io.stdout.write(`Gateway logs:       ${logs.edgeLogs.join(', ')}\n`);
  io.stdout.write(`Edge-function logs: ${logs.functionEdgeLogs.join(', ')}\n`);
  io.stdout.write(`Projects (busiest first): ${logs.projects.slice(0, 3).join(', ')}${logs.projects.length > 3 ? ', …' : ''}\n`);
  io.stdout.write(`Logs lead up to ${now.toISOString()}.\n`);
  return 0;
}
