// The controller every bosun reconciler is built from — and the one shape a controller takes
// (client-go's sample-controller, controller-runtime's builder; docs/how-to-add-a-component.md
// works one through):
//
//   export function fooController(ctx: FooContext): Controller {     // a factory, no class needed
//     const foos = ctx.informer(resources.foos);                      // the manager's shared informers
//     const bars = ctx.informer(resources.bars);
//     const controller = new Controller({ name: 'foo-controller', clock: ctx.clock, sync });
//     controller.watch(foos);                                         // primary: a Foo's own key
//     controller.watch(bars, enqueueOwner({ group: GROUP, kind: 'Foo' }), generationChanged); // owners.ts, predicates.ts
//     return controller;
//     async function sync(key: string, { log, signal }: SyncContext): Promise<SyncResult | void> {
//       // level-based: read the caches, compute what should be, write the difference, return;
//       // throw to retry after a backoff, TerminalError to wait for the next change,
//       // { requeueAfterMs } to look again later (a grace period)
//     }
//   }
//   manager.add(fooController(ctx));                                  // the manager runs it (manager.ts)
//
// The rules of the shape: informers come from the manager (never started by the controller's
// author), every time rule runs on the `clock` option (the work queue's backoffs and
// requeue-afters too, so a FakeClock drives them in tests), an operator's single key ("cluster")
// is given as `keys` so it is reconciled every term even before an input exists, a start-up step
// (removing what was orphaned while no leader ran) is `onStarted`, and an operator
// reports on its ClusterOperator through operator-status.ts (its controllers' failures through
// `reportTo(status.degradedOnError(...))`). A reconciler with much state may be a class; the
// manager still runs its Controller (see the MCO and CCM operators), never a Runnable of its own.
//
// How a Controller works: informers feed keys into a work queue
// (each watched kind maps its events to the keys of the objects to reconcile), workers take keys
// and call the sync function, and the outcome decides what happens next:
//   - success: the key's failures are forgotten; `{ requeueAfterMs }` asks for it again later;
//   - an error: the key comes back after its backoff, and the error is logged and reported
//     (onError) — with the retry count, so a persistent failure stands out;
//   - a TerminalError: not retried (until the key's objects change again), reported.
// With `degraded`, each outcome is also written as a condition on a named object (degraded.ts);
// with `reportTo`, each outcome is told to a reporter (an operator's degraded-on-error).
// Watches take an event filter (predicates.ts) beside the key mapper (owners.ts has the owner
// mapping). A resync period re-enqueues every key of the primary kind. Shutdown stops taking keys and waits
// for the syncs in flight. A controller is a manager Runnable (start = run) and can run again
// after a stop (a new leadership term): it then starts from a fresh queue holding every key its
// informers' caches map to.
import { BosunError } from '../common/errors.js';
import { setMaxListeners } from 'node:events';
import { logger, type Logger } from '../common/log.js';
import { type Clock, realClock, sleepOn } from './clock.js';
import type * as api from '../api/index.js';
import { type DegradedOnError, reportDegraded } from './degraded.js';
import { type EventType, type Informer, keyOf } from './informer.js';
import type { EventFilter } from './predicates.js';
import { reconcileErrors, reconcileTime, reconcileTotal } from './metrics.js';
import { WorkQueue, type WorkQueueOptions } from './workqueue.js';

/** An error retrying cannot fix (bad input): reported, not retried. */
export class TerminalError extends BosunError {
  constructor(message: string) {
    super('Terminal', message);
  }
}

export interface SyncResult {
  /** Reconcile this key again after this long (e.g. to wait for a grace period). */
  requeueAfterMs?: number;
}

export interface SyncContext {
  signal: AbortSignal;
  log: Logger;
}

/** Hears every sync outcome (error undefined: it succeeded), e.g. an operator's degraded-on-error
 *  (operator-status.ts); `retries` counts the key's consecutive failures including this one. */
export interface SyncReporter {
  report(key: string, error: Error | undefined, retries: number, terminal: boolean): void;
}

export type SyncFunction = (key: string, context: SyncContext) => Promise<SyncResult | void> | SyncResult | void;

/** Maps an event on a watched object to the keys to reconcile (none: undefined or []). */
export type KeyMapper<T extends api.KubeObject = api.KubeObject> = (object: T, type: EventType, old?: T) => string | string[] | undefined;

export interface ControllerOptions {
  name: string;
  sync: SyncFunction;
  /** Concurrent workers (default 1). A key is never synced by two at once. */
  workers?: number;
  /** Re-enqueue every object of the primary informers this often (default: never). */
  resyncPeriodMs?: number;
  /** The clock the resync period, the backoffs and requeue-afters run on (default the wall clock). */
  clock?: Clock;
  queue?: Omit<WorkQueueOptions, 'name'>;
  /** Called for every failed sync: report it (a condition, an event). */
  onError?: (key: string, error: Error, retries: number, terminal: boolean) => void;
  /** Retries after which an error is logged as persistent (default 5). */
  persistentAfter?: number;
  /** Report each outcome as a condition on an object (e.g. RenderDegraded on the key's pool). */
  degraded?: DegradedOnError;
  /** Keys reconciled each time the controller runs, whatever the caches hold: an operator's one
   *  key ("cluster"), which must run even before any of its inputs exists. */
  keys?: string[];
  /** A start-up step, each time the controller runs: after its caches have synced, before its
   *  workers (e.g. removing what was orphaned while no leader ran). A failure is logged; the
   *  controller runs regardless. */
  onStarted?: (signal: AbortSignal) => Promise<void> | void;
}

export class Controller {
  readonly name: string;
  private workQueue: WorkQueue;
  /** The watched informers, each with its mapper; stored by their common header (each mapper is only ever given its own informer's objects). */
  private readonly informers: Array<{ informer: Informer<api.KubeObject>; primary: boolean; mapper: KeyMapper<api.KubeObject> }> = [];
  private readonly log: Logger;
  private readonly lastErrors = new Map<string, Error>();
  private readonly reporters: SyncReporter[] = [];

  constructor(private readonly options: ControllerOptions) {
    this.name = options.name;
    this.workQueue = new WorkQueue({ name: options.name, clock: options.clock, ...options.queue });
    this.log = logger(options.name);
  }

  get queue(): WorkQueue {
    return this.workQueue;
  }

  /**
   * Watches an informer. Without a mapper the informer is primary: its objects' own keys are
   * reconciled, and they are what a resync re-enqueues.
   */
  watch<T extends api.KubeObject>(informer: Informer<T>, map?: KeyMapper<T>, filter?: EventFilter<T>): this {
    const keys: KeyMapper<T> = map ?? ((object) => keyOf(object));
    const mapper: KeyMapper<T> = filter ? (object, type, old) => (filter(type, object, old) ? keys(object, type, old) : undefined) : keys;
    this.informers.push({ informer: informer as unknown as Informer<api.KubeObject>, primary: !map, mapper: mapper as KeyMapper<api.KubeObject> });
    informer.on((type, object, old) => this.enqueueMapped(mapper, type, object, old));
    return this;
  }

  private enqueueMapped<T extends api.KubeObject>(mapper: KeyMapper<T>, type: EventType, object: T, old?: T): void {
    let keys: string | string[] | undefined;
    try {
      keys = mapper(object, type, old);
    } catch (e) {
      this.log.error({ err: e }, 'mapping an event to keys failed');
      return;
    }
    for (const key of typeof keys === 'string' ? [keys] : (keys ?? [])) this.queue.add(key);
  }

  /** As run(): the manager's Runnable interface. */
  start(signal: AbortSignal): Promise<void> {
    return this.run(signal);
  }

  enqueue(key: string, afterMs = 0): void {
    this.queue.addAfter(key, afterMs);
  }

  /** Reports every sync outcome to `reporter` too (an operator's degraded-on-error). */
  reportTo(reporter: SyncReporter): this {
    this.reporters.push(reporter);
    return this;
  }

  /** The last error a key's sync failed with, until it succeeds. */
  lastError(key: string): Error | undefined {
    return this.lastErrors.get(key);
  }

  /** Starts the informers, waits for their caches, then runs workers until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.workQueue.isShuttingDown) {
      // Run again (a new leadership term): what happened meanwhile is in the caches, not the queue.
      this.workQueue = new WorkQueue({ name: this.name, clock: this.options.clock, ...this.options.queue });
      for (const { informer, mapper } of this.informers) for (const object of informer.list()) this.enqueueMapped(mapper, 'add', object);
    }
    for (const key of this.options.keys ?? []) this.queue.add(key);
    for (const { informer } of this.informers) informer.start(signal);
    // One listener on the caller's signal however many informers there are to wait for.
    const waiting = new AbortController();
    setMaxListeners(0, waiting.signal);
    const stopWaiting = () => waiting.abort();
    signal.addEventListener('abort', stopWaiting, { once: true });
    await Promise.all(this.informers.map(({ informer }) => informer.waitForSync(waiting.signal))).catch(() => undefined);
    signal.removeEventListener('abort', stopWaiting);
    if (signal.aborted) return;
    if (this.options.onStarted) {
      try {
        await this.options.onStarted(signal);
      } catch (e) {
        this.log.warn({ err: (e as Error).message }, 'the start-up step failed; reconciling regardless');
      }
      if (signal.aborted) return;
    }
    this.log.info({ workers: this.options.workers ?? 1 }, 'controller started');
    const onAbort = () => this.queue.shutDown();
    signal.addEventListener('abort', onAbort, { once: true });
    const resync = this.options.resyncPeriodMs ? this.resyncLoop(this.options.resyncPeriodMs, signal) : Promise.resolve();
    const workers = Array.from({ length: this.options.workers ?? 1 }, () => this.worker(signal));
    await Promise.all([...workers, resync]);
    signal.removeEventListener('abort', onAbort);
    this.log.info('controller stopped');
  }

  private async resyncLoop(periodMs: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await sleepOn(this.options.clock ?? realClock, periodMs, signal);
      if (signal.aborted) return;
      for (const { informer, primary } of this.informers) if (primary) for (const object of informer.list()) this.queue.add(keyOf(object));
    }
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const started = process.hrtime.bigint();
      try {
        const result = await this.options.sync(key, { signal, log: this.log.child({ key }) });
        this.queue.forget(key);
        this.lastErrors.delete(key);
        if (result?.requeueAfterMs !== undefined) {
          reconcileTotal.inc({ controller: this.name, result: 'requeue_after' });
          this.queue.addAfter(key, result.requeueAfterMs);
        } else {
          reconcileTotal.inc({ controller: this.name, result: 'success' });
        }
        this.tell(key, undefined, 0, false);
        await this.report(key, undefined);
      } catch (e) {
        const error = e instanceof Error ? e : new Error(String(e));
        this.lastErrors.set(key, error);
        reconcileErrors.inc({ controller: this.name });
        const terminal = error instanceof TerminalError;
        const retries = this.queue.retries(key);
        if (terminal) {
          reconcileTotal.inc({ controller: this.name, result: 'terminal_error' });
          this.queue.forget(key);
          this.log.error({ key, err: error.message }, 'sync failed; not retrying');
        } else {
          reconcileTotal.inc({ controller: this.name, result: 'error' });
          const delay = signal.aborted ? 0 : this.queue.addRateLimited(key);
          const persistent = retries + 1 >= (this.options.persistentAfter ?? 5);
          this.log[persistent ? 'error' : 'warn']({ key, err: error.message, retries: retries + 1, retryInMs: delay }, persistent ? 'sync keeps failing' : 'sync failed; retrying');
        }
        try {
          this.options.onError?.(key, error, retries + 1, terminal);
        } catch (reportError) {
          this.log.error({ key, err: reportError }, 'reporting a sync error failed');
        }
        this.tell(key, error, retries + 1, terminal);
        if (terminal || retries + 1 >= (this.options.degraded?.after ?? 1)) await this.report(key, error);
      } finally {
        reconcileTime.observe({ controller: this.name }, Number(process.hrtime.bigint() - started) / 1e9);
        this.queue.done(key);
      }
    }
  }

  private tell(key: string, error: Error | undefined, retries: number, terminal: boolean): void {
    for (const reporter of this.reporters) {
      try {
        reporter.report(key, error, retries, terminal);
      } catch (e) {
        this.log.error({ key, err: e }, 'reporting a sync outcome failed');
      }
    }
  }

  /** Writes the outcome as the degraded condition, when asked to; a failed write is retried. */
  private async report(key: string, error: Error | undefined): Promise<void> {
    if (!this.options.degraded) return;
    try {
      await reportDegraded(this.options.degraded, key, error);
    } catch (e) {
      this.log.warn({ key, condition: this.options.degraded.condition, err: (e as Error).message }, 'could not write the condition; retrying');
      this.queue.addRateLimited(key);
    }
  }
}
