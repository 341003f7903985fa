// Polling until a condition holds, for tests against servers, controllers and processes that
// converge: the one wait-until loop every test uses.
import assert from 'node:assert/strict';

export interface EventuallyOptions {
  /** Give up after this long (default 20 s). */
  timeoutMs?: number;
  /** Wait this long between checks (default 100 ms; shorter where a test measures timing). */
  intervalMs?: number;
  /** More to say when it times out (a process's output, say). */
  detail?: () => string;
}

/**
 * Calls `check` every `intervalMs` until it returns something other than undefined or false, and
 * returns that; fails naming `what` (and the last error `check` threw, and `detail()`) after
 * `timeoutMs`. A number for the options is the timeout.
 */
export async function eventually<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, options: number | EventuallyOptions = {}): Promise<T> {
  const { timeoutMs = 20_000, intervalMs = 100, detail } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}${detail ? `\n${detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
