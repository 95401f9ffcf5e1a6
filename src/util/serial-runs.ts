/**
 * Runs a piece of background work one run at a time, on demand. A trigger during a run asks for
 * one more run after it, so work that arrives meanwhile (a segment closing) is never lost and never
 * done by two runs at once. The background compactor and the ClickHouse shipper both work this way.
 *
 * @example
 * const runs = new SerialRuns(async () => { await compactClosedSegments(); });
 * wal.onSegmentClosed(() => runs.trigger());
 * await runs.stop();
 */
export class SerialRuns {
  private running: Promise<void> | null = null;
  private again = false;
  private stoppedFlag = false;

  /**
   * @param run One run. Returning `false` ends the series even when more runs were asked for
   *   (a failure that waits for a pause before anything is tried again).
   * @param paused While true, a trigger outside a run starts nothing (a retry pause is running).
   */
  constructor(
    private readonly run: () => Promise<boolean | void>,
    private readonly paused: () => boolean = () => false,
  ) {}

  get stopped(): boolean {
    return this.stoppedFlag;
  }

  /** Starts a run now, or one more after the run in progress. */
  trigger(): void {
    if (this.stoppedFlag) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.paused()) return;
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  /** Resolves when no run is going on. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** No more runs; waits for the one in progress. */
  async stop(): Promise<void> {
    this.stoppedFlag = true;
    await this.settled();
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      if ((await this.run()) === false) return;
    } while (this.again && !this.stoppedFlag);
  }
}
