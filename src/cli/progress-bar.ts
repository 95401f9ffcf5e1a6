import type { CliIO } from './io';

/**
 * A progress bar on stderr: redrawn in place on a terminal, a line per 25% otherwise (CI logs),
 * so stdout stays clean for the command's own output.
 */
export function progressBar(stderr: CliIO['stderr'], label: string): { update: (done: number, total: number) => void; finish: () => void } {
  const tty = Boolean(stderr.isTTY);
  let lastDrawn = -1;
  let lastLine = -1;
  let shown = false;
  return {
    update(done, total) {
      const ratio = total > 0 ? Math.min(1, done / total) : 1;
      const percent = Math.floor(ratio * 100);
      if (tty) {
        if (percent === lastDrawn) return;
        lastDrawn = percent;
        const width = 30;
        const filled = Math.round(ratio * width);
        stderr.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(percent).padStart(3)}% ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`);
        shown = true;
      } else {
        const step = Math.floor(percent / 25);
        if (step === lastLine) return;
        lastLine = step;
        stderr.write(`${label}: ${percent}% (${done}/${total})\n`);
      }
    },
    finish() {
      if (tty && shown) stderr.write('\n');
    },
  };
}
