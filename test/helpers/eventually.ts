// Polling until a condition holds, for tests against servers and controllers that converge.
import assert from 'node:assert/strict';

/**
 * Calls `check` every 100 ms until it returns something other than undefined or false, and
 * returns that; fails naming `what` (and the last error `check` threw) after `timeoutMs`.
 */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
