// The clock every time-based rule reads (the CVO's 30- and 40-minute timers, grace periods,
// back-offs), so that tests can move time instead of waiting for it. Production code takes a
// `Clock` (default `realClock`); tests pass a `FakeClock` and `advance()` it.

export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  /** Runs `fn` once `ms` have passed on this clock; returns a handle for clearTimeout. */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

export interface ClockTimer {
  readonly id: number;
}

/** Waits `ms` on the clock, or less when the signal aborts. */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The wall clock. */
export const realClock: Clock = (() => {
  let next = 0;
  const handles = new Map<number, NodeJS.Timeout>();
  return {
    now: () => Date.now(),
    setTimeout(fn, ms) {
      const id = ++next;
      handles.set(
        id,
        setTimeout(() => {
          handles.delete(id);
          fn();
        }, ms),
      );
      return { id };
    },
    clearTimeout(timer) {
      const handle = handles.get(timer.id);
      if (handle) clearTimeout(handle);
      handles.delete(timer.id);
    },
  };
})();

/** A clock that stands still until `advance()` moves it; due timers fire in order of their time. */
export class FakeClock implements Clock {
  private current: number;
  private next = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const id = ++this.next;
    this.timers.set(id, { at: this.current + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(timer: ClockTimer): void {
    this.timers.delete(timer.id);
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way, earliest first. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= target && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      this.timers.delete(due[0]);
      this.current = Math.max(this.current, due[1].at);
      due[1].fn();
    }
    this.current = target;
  }
}
