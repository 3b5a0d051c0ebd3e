/** Decides whether a dropped daemon connection is restarted automatically. */

export class RestartPolicy {
  private readonly crashes: number[] = [];
  private readonly maxRestarts: number;
  private readonly windowMs: number;

  constructor(maxRestarts = 2, windowMs = 60_000) {
    this.maxRestarts = maxRestarts;
    this.windowMs = windowMs;
  }

  /** Record a crash at `now` and say whether another automatic restart is allowed. */
  shouldRestart(now: number): boolean {
    this.crashes.push(now);
    while (this.crashes.length > 0 && now - (this.crashes[0] ?? now) > this.windowMs) {
      this.crashes.shift();
    }
    return this.crashes.length <= this.maxRestarts;
  }

  reset(): void {
    this.crashes.length = 0;
  }
}
