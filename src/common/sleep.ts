// Waiting that an AbortSignal can cut short, without leaving listeners behind.
//
// A signal gets one 'abort' listener of its own however many sleeps wait on it: the sleeps are
// kept in a Set beside it. Thousands of loops sleeping on one signal (the simulated nodes of
// bench:nodes, two loops each) would otherwise each add and remove a listener on every turn,
// and an EventTarget looks for duplicates through its whole list on every add: quadratic.

/** setTimeout's longest delay (about 24.8 days); a longer one fires at once, with a warning. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The wake-ups waiting on each signal (the signal's one listener runs them all). */
const sleepers = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `wake` when `signal` aborts; returns the function that forgets it. */
function onAbort(signal: AbortSignal, wake: () => void): () => void {
  let waiting = sleepers.get(signal);
  if (!waiting) {
    const set = new Set<() => void>();
    waiting = set;
    sleepers.set(signal, set);
    signal.addEventListener('abort', () => {
      for (const f of [...set]) f();
      set.clear();
    }, { once: true });
  }
  const set = waiting;
  set.add(wake);
  return () => set.delete(wake);
}

/** Waits `ms` (any length: a long wait is a chain of timers), or less when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const until = Date.now() + ms;
    let timer: NodeJS.Timeout;
    let forget: (() => void) | undefined;
    const done = () => {
      clearTimeout(timer);
      forget?.();
      resolve();
    };
    const arm = () => {
      const left = until - Date.now();
      timer = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(done, Math.max(0, left));
    };
    arm();
    if (signal) forget = onAbort(signal, done);
  });
}
