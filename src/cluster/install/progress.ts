// What the bring-up shows while it works: numbered steps with the time since it began, and, for
// anything it waits on, what it is waiting for and how long it has waited — a line when the wait
// begins, a line each time what it sees changes, and one every 15 s while nothing does.
export type Say = (line: string) => void;

export class Progress {
  private readonly started = Date.now();

  constructor(
    private readonly say: Say,
    /** How many steps there are (known once the bring-up knows whether it installs). */
    public total: number,
  ) {}

  elapsed(): string {
    return `${((Date.now() - this.started) / 1000).toFixed(1)}s`;
  }

  step(n: number, text: string): void {
    this.say(`[${n}/${this.total}] ${text} (${this.elapsed()})`);
  }

  detail(text: string): void {
    this.say(`      ${text}`);
  }

  /**
   * Polls `check` until it returns `{ done: true }`, showing its `status` as it changes; throws
   * after `timeoutMs` naming what was waited on and the last status seen.
   */
  async waitFor(what: string, check: () => Promise<{ done: boolean; status: string }>, opts: { timeoutMs: number; intervalMs?: number; signal?: AbortSignal }): Promise<void> {
    const since = Date.now();
    const waited = () => `${Math.round((Date.now() - since) / 1000)}s`;
    let last = '';
    let shownAt = 0;
    this.detail(`waiting for ${what}`);
    for (;;) {
      if (opts.signal?.aborted) throw new Error(`stopped while waiting for ${what}`);
      let result: { done: boolean; status: string };
      try {
        result = await check();
      } catch (e) {
        result = { done: false, status: `cannot tell yet: ${(e as Error).message}` };
      }
      if (result.done) {
        this.detail(`${what}: ${result.status} (after ${waited()})`);
        return;
      }
      if (result.status !== last || Date.now() - shownAt > 15_000) {
        this.detail(`  ${result.status} (${waited()})`);
        last = result.status;
        shownAt = Date.now();
      }
      if (Date.now() - since > opts.timeoutMs) throw new Error(`gave up waiting for ${what} after ${waited()}: ${last}`);
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
    }
  }
}
