// The work queue controllers take keys from, with client-go's guarantees: a key waiting is held
// once however often it is added (dedupe), a key being processed is never handed to a second
// worker (an add while it is processed comes back after it is done), a failed key returns after
// a per-key exponential backoff with a cap, all retries share an overall rate limit (a token
// bucket), and a key can be asked back after a given time (requeue-after). Every time it keeps —
// delays, backoffs, the bucket's refill, the wait and work durations — is on its Clock, so a test
// moves time instead of waiting for it.
import { type Clock, type ClockTimer, realClock } from './clock.js';
import { queueAdds, queueDepth, queueRetries, queueWait, queueWork } from './metrics.js';

export interface WorkQueueOptions {
  name: string;
  /** First retry delay of a failing key (default 5 ms), doubled per failure… */
  baseDelayMs?: number;
  /** …up to this cap (default 1000 s, as client-go). */
  maxDelayMs?: number;
  /** Overall retry rate limit: tokens per second (default 10) and burst (default 100). */
  ratePerSecond?: number;
  burst?: number;
  /** The clock delays and backoffs run on (default the wall clock). */
  clock?: Clock;
  /**
   * Keys handed out highest first by this (kube-scheduler's active queue: pod priority), in the
   * order they came among equals; without it, first in, first out.
   */
  priorityOf?: (key: string) => number;
}

export class WorkQueue {
  readonly name: string;
  private readonly queue: string[] = [];
  private readonly waiting = new Set<string>();
  private readonly processing = new Set<string>();
  /** Keys added again while processing: they go back in the queue when done. */
  private readonly dirtyWhileProcessing = new Set<string>();
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: ClockTimer }>();
  private readonly failures = new Map<string, number>();
  private readonly getters: Array<(key: string | undefined) => void> = [];
  private readonly idleWaiters: Array<() => void> = [];
  private shuttingDown = false;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly rate: number;
  private readonly burst: number;
  private tokens: number;
  private tokensAt: number;
  private readonly clock: Clock;
  private readonly priorityOf?: (key: string) => number;

  constructor(options: WorkQueueOptions) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.priorityOf = options.priorityOf;
    this.tokensAt = this.clock.now();
    this.baseDelayMs = options.baseDelayMs ?? 5;
    this.maxDelayMs = options.maxDelayMs ?? 1_000_000;
    this.rate = options.ratePerSecond ?? 10;
    this.burst = options.burst ?? 100;
    this.tokens = this.burst;
  }

  /** Keys waiting (not counting keys being processed or scheduled for later). */
  get length(): number {
    return this.queue.length;
  }

  /** Nothing waiting and nothing being processed (keys scheduled for later do not count). */
  get idle(): boolean {
    return this.queue.length === 0 && this.processing.size === 0;
  }

  /** Calls `fn` once the queue is idle: now if it is, else when the last key in hand is done. */
  whenIdle(fn: () => void): void {
    if (this.idle) fn();
    else this.idleWaiters.push(fn);
  }

  /** Adds a key now; a key already waiting is not added twice. */
  add(key: string): void {
    if (this.shuttingDown) return;
    if (this.processing.has(key)) {
      this.dirtyWhileProcessing.add(key);
      return;
    }
    if (this.waiting.has(key)) return;
    this.waiting.add(key);
    this.addedAt.set(key, this.clock.now());
    queueAdds.inc({ name: this.name });
    const getter = this.getters.shift();
    if (getter) {
      this.waiting.delete(key);
      this.begin(key);
      getter(key);
      return;
    }
    this.queue.push(key);
    queueDepth.set({ name: this.name }, this.queue.length);
  }

  /** Adds a key after `ms`; an earlier pending delayed add of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = this.clock.now() + ms;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) this.clock.clearTimeout(pending.timer);
    const timer = this.clock.setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, { at, timer });
  }

  /** Adds a failed key back after its backoff (and the overall rate limit). */
  addRateLimited(key: string): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const perItem = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(failures, 40));
    const overall = this.takeToken();
    const delay = Math.max(perItem, overall);
    queueRetries.inc({ name: this.name });
    this.addAfter(key, delay);
    return delay;
  }

  /** Forgets a key's failures (after a success, or a terminal error). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key, waiting until there is one; undefined once the queue shuts down. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.priorityOf && this.queue.length > 1 ? this.takeHighest(this.priorityOf) : this.queue.shift();
    if (key !== undefined) {
      this.waiting.delete(key);
      queueDepth.set({ name: this.name }, this.queue.length);
      this.begin(key);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Removes and returns the waiting key of the highest priority, the earliest among equals. */
  private takeHighest(priorityOf: (key: string) => number): string {
    let best = 0;
    let bestPriority = priorityOf(this.queue[0]);
    for (let i = 1; i < this.queue.length; i++) {
      const priority = priorityOf(this.queue[i]);
      if (priority > bestPriority) {
        best = i;
        bestPriority = priority;
      }
    }
    return this.queue.splice(best, 1)[0];
  }

  /** Marks a key processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    const started = this.startedAt.get(key);
    if (started !== undefined) queueWork.observe({ name: this.name }, (this.clock.now() - started) / 1000);
    this.startedAt.delete(key);
    if (this.dirtyWhileProcessing.delete(key)) this.add(key);
    if (this.idle) for (const fn of this.idleWaiters.splice(0)) fn();
  }

  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.timers.values()) this.clock.clearTimeout(timer);
    this.timers.clear();
    for (const getter of this.getters.splice(0)) getter(undefined);
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  private begin(key: string): void {
    this.processing.add(key);
    const added = this.addedAt.get(key);
    if (added !== undefined) queueWait.observe({ name: this.name }, (this.clock.now() - added) / 1000);
    this.addedAt.delete(key);
    this.startedAt.set(key, this.clock.now());
  }

  /** Delay (ms) until the overall bucket grants a retry; takes the token. */
  private takeToken(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.tokensAt) / 1000) * this.rate);
    this.tokensAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.rate) * 1000);
  }
}
