import { compactLogs, type CompactStage } from '../compaction/compact';
import { commandConfig } from './config-file';
import { helpText } from './help';
import type { CliIO } from './io';
import { duckdbOf, parseOptions, TYPED_COLUMNS_OPTIONS, typedColumnsOf } from './parse-options';
import { progressBar } from './progress-bar';
import { sourceFromCli } from './source-flags';
import { UsageError } from './usage-error';
import { warnEmptyGlobs } from './warnings';

const OPTIONS = {
  source: { type: 'string' },
  config: { type: 'string' },
  input: { type: 'string', multiple: true },
  out: { type: 'string' },
  'delete-source': { type: 'boolean' },
  threads: { type: 'string' },
  'memory-limit': { type: 'string' },
  ...TYPED_COLUMNS_OPTIONS,
} as const;

/**
 * `log-endpoints compact --source <source>`: NDJSON logs to the fast Parquet layout, with a
 * progress bar per stage. Any source of the set: a built-in or one of `--config`'s.
 */
export async function compactCommand(argv: string[], io: CliIO): Promise<number> {
  const { sources } = await commandConfig('compact', argv);
  const { values } = parseOptions('compact', argv, OPTIONS);
  if (values.help) {
    io.stdout.write(helpText('compact', sources)!);
    return 0;
  }
  const source = sourceFromCli('compact', values.source, sources);
  if (!values.input?.length) throw new UsageError('Give the NDJSON files to compact: --input <glob>.', 'compact');
  if (!values.out) throw new UsageError('Give the output folder: --out <dir>.', 'compact');

  // Ctrl+C stops between steps; the inputs are untouched then.
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  warnEmptyGlobs(io, '--input', values.input);
  const shown: { stage: CompactStage | null; bar: ReturnType<typeof progressBar> | null } = { stage: null, bar: null };
  try {
    const result = await compactLogs({
      source: source.name,
      sourceDefinitions: sources.list,
      inputs: values.input,
      outDir: values.out,
      deleteSource: values['delete-source'],
      typedColumns: typedColumnsOf(values),
      signal: controller.signal,
      duckdb: duckdbOf('compact', values),
      onProgress: (p) => {
        if (p.stage !== shown.stage) {
          shown.bar?.finish();
          shown.stage = p.stage;
          shown.bar = progressBar(io.stderr, p.stage[0]!.toUpperCase() + p.stage.slice(1));
        }
        shown.bar!.update(Math.round(p.fraction * 1000), 1000);
      },
    });
    shown.bar?.finish();
    shown.bar = null;
    for (const skipped of result.skippedFiles) io.stderr.write(`warning: ${skipped.path} was not compacted: ${skipped.message}\n`);
    if (result.alreadyCompacted) io.stdout.write(`Nothing new: every event of the inputs is in ${values.out} already.\n`);
    else if (result.inputFiles.length === 0) io.stdout.write('No input to compact.\n');
    else
      io.stdout.write(`Compacted ${result.inputFiles.length} file${result.inputFiles.length === 1 ? '' : 's'}: ${result.rows} events in ${result.files.length} Parquet files under ${values.out}.\n`);
    if (result.backfilledFiles?.length) io.stdout.write(`Stored the rollups of ${result.backfilledFiles.length} Parquet file${result.backfilledFiles.length === 1 ? '' : 's'} compacted before.\n`);
    if (result.skippedLines) io.stdout.write(`${result.skippedLines} lines were not events (broken JSON or no timestamp) and were skipped.\n`);
    if (values['delete-source']) {
      if (result.deletedFiles.length) io.stdout.write(`Deleted ${result.deletedFiles.length} input file${result.deletedFiles.length === 1 ? '' : 's'} (every event verified in the dataset).\n`);
      for (const kept of result.keptFiles) io.stdout.write(`Kept ${kept.path}: ${kept.reason}.\n`);
    }
    return 0;
  } finally {
    shown.bar?.finish();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
