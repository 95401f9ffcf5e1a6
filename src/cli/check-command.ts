import { checkDataDir } from '../managed/check-data-dir';
import { commandConfig } from './config-file';
import { helpText } from './help';
import type { CliIO } from './io';
import { parseOptions } from './parse-options';
import { UsageError } from './usage-error';

const OPTIONS = {
  'data-dir': { type: 'string' },
  repair: { type: 'boolean' },
  config: { type: 'string' },
  supabase: { type: 'boolean' },
} as const;

/**
 * `log-endpoints check --data-dir <dir> [--repair]`: verifies a managed data dir and, with
 * `--repair`, restores what can be restored, saying what it did. Exit 0 when nothing is wrong
 * (any more), 1 when something is (or the data dir is in use, for --repair), 2 on wrong usage.
 */
export async function checkCommand(argv: string[], io: CliIO): Promise<number> {
  // The sources --config or --supabase declare are written again when damaged, not only set aside.
  const { sources } = await commandConfig('check', argv);
  const { values } = parseOptions('check', argv, OPTIONS);
  if (values.help) {
    io.stdout.write(helpText('check')!);
    return 0;
  }
  if (!values['data-dir']) throw new UsageError('Give the data dir: --data-dir <dir>.', 'check');
  const report = await checkDataDir(values['data-dir'], { repair: values.repair, sources });
  for (const line of report.repaired) io.stdout.write(`Repaired: ${line}\n`);
  for (const c of report.checked) {
    io.stdout.write(
      `${c.source}: ${c.segments} WAL segment${c.segments === 1 ? '' : 's'}, ${c.commits} commit${c.commits === 1 ? '' : 's'}, ${c.files} data file${c.files === 1 ? '' : 's'} checked.\n`,
    );
  }
  for (const p of report.problems) io.stdout.write(`${p.kind} ${p.path}: ${p.message}\n`);
  if (report.problems.length === 0) {
    io.stdout.write(`${report.dataDir} is intact.\n`);
    return 0;
  }
  io.stdout.write(
    `${report.problems.length} problem${report.problems.length === 1 ? '' : 's'} found${values.repair ? ' after the repair' : '; log-endpoints check --repair restores what can be restored'}.\n`,
  );
  return 1;
}
