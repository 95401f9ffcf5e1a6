/**
 * Crash tests kill a real process at exact points of the data path: with
 * `LOG_ENDPOINTS_FAILPOINT=<name>` in its environment, the process sends itself SIGKILL when it
 * reaches that point (no cleanup runs, as in a power cut of the process). Unset, this is a no-op.
 * Names: `compact:written`, `compact:publish:<n>`, `compact:before-commit`, `compact:after-commit`,
 * `compact:delete:<n>`, `compact:deleted`, `merge:after-commit`, `backfill:before-commit`; managed storage's ClickHouse shipper:
 * `ship:attempt-recorded`, `ship:mid-insert`, `ship:batch-inserted`, `ship:inserted`, `ship:released`.
 */
export function failpoint(name: string): void {
  if (process.env.LOG_ENDPOINTS_FAILPOINT === name) process.kill(process.pid, 'SIGKILL');
}
