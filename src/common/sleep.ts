// Waiting that an AbortSignal can cut short, without leaving listeners behind.

/** setTimeout's longest delay (about 24.8 days); a longer one fires at once, with a warning. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Waits `ms` (any length: a long wait is a chain of timers), or less when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const until = Date.now() + ms;
    let timer: NodeJS.Timeout;
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const arm = () => {
      const left = until - Date.now();
      timer = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(done, Math.max(0, left));
    };
    arm();
    signal?.addEventListener('abort', done, { once: true });
  });
}
