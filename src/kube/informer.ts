// Informers: a cache of one resource kept current by list-then-watch, as client-go's reflector
// does it. The informer lists (in pages), then watches from the list's resourceVersion with
// bookmarks; when the watch ends (server timeout, connection lost) it resumes from the last
// resourceVersion it saw; when that is too old (410 Expired) it lists again and turns the
// difference between cache and list into add/update/delete events, so handlers never miss a
// change. Errors never stop it: it retries with capped exponential backoff until stopped.
//
// One informer per resource and selector is shared by every controller of a process through an
// InformerFactory.
import { setMaxListeners } from 'node:events';
import { logger } from '../common/log.js';
import { type Clock, realClock, sleepOn } from './clock.js';
import { type KubeClient, type ResourceRef, apiVersionOf, resourcePath } from './client.js';
import type * as api from '../api/index.js';

const log = logger('informer');

export type EventType = 'add' | 'update' | 'delete';

/** One event of a watch stream, as the API server sends it (an ERROR's object is a Status). */
interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T | { code?: number; message?: string };
}
export type Handler<T extends api.KubeObject = api.KubeObject> = (type: EventType, object: T, old?: T) => void;

export interface InformerOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Server-side watch timeout before the informer re-watches (default 5 to 10 minutes, jittered). */
  watchTimeoutSeconds?: number;
  pageSize?: number;
  /** The clock the retry back-off runs on (default the wall clock). */
  clock?: Clock;
}

/** The cache key of an object: namespace/name, or name for cluster-scoped objects. */
export function keyOf(object: { metadata?: { namespace?: string; name?: string } }): string {
  const { namespace, name } = object.metadata ?? {};
  return namespace ? `${namespace}/${name}` : String(name);
}

/** An informer of objects of type T (as the API serves them; typing is the caller's claim). */
export class Informer<T extends api.KubeObject = api.Unstructured> {
  private readonly cache = new Map<string, T>();
  private readonly handlers: Handler<T>[] = [];
  private resourceVersion = '';
  private synced = false;
  private readonly syncWaiters: Array<() => void> = [];
  private running?: Promise<void>;
  private stopper = new AbortController();
  /** Lists done so far (first one included); for tests and metrics. */
  lists = 0;

  constructor(
    private readonly client: KubeClient,
    readonly resource: ResourceRef<T>,
    private readonly options: InformerOptions = {},
  ) {}

  get description(): string {
    return `${this.resource.resource}.${apiVersionOf(this.resource)}${this.options.namespace ? ` in ${this.options.namespace}` : ''}`;
  }

  /** Registers a handler; objects already in the cache are replayed to it as adds. */
  on(handler: Handler<T>): void {
    this.handlers.push(handler);
    for (const object of this.cache.values()) handler('add', object);
  }

  list(): T[] {
    return [...this.cache.values()];
  }

  get(name: string, namespace?: string): T | undefined {
    return this.cache.get(namespace ? `${namespace}/${name}` : name);
  }

  getByKey(key: string): T | undefined {
    return this.cache.get(key);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list is in the cache. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    // A signal that is already aborted fires no 'abort' event: answer it now, not never.
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal?.reason ?? new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /**
   * Starts listing and watching until `signal` aborts or stop() is called. Idempotent while it
   * runs. Started again after it stopped (a controller's next leadership term: its informers
   * stopped with the last one), it lists again once the old loop has ended, and the handlers get
   * what changed meanwhile as events (as after a 410), so the cache is never left frozen.
   */
  start(signal?: AbortSignal): void {
    if (this.running && !this.stopper.signal.aborted) return;
    const previous = this.running ?? Promise.resolve();
    if (this.stopper.signal.aborted) this.stopper = new AbortController();
    const stopper = this.stopper;
    // An already-aborted signal fires no 'abort' event, so it is checked here: started with one,
    // the informer stops at once instead of watching forever.
    if (signal?.aborted) stopper.abort();
    else signal?.addEventListener('abort', () => stopper.abort(), { once: true });
    this.running = previous.then(() => this.run(stopper.signal)).catch((e) => log.error({ err: e, informer: this.description }, 'informer ended'));
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    await this.running;
  }

  private emit(type: EventType, object: T, old?: T): void {
    for (const handler of this.handlers) {
      try {
        handler(type, object, old);
      } catch (e) {
        log.error({ err: e, informer: this.description }, 'an informer event handler threw');
      }
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.relist(signal);
          needList = false;
        }
        const outcome = await this.watch(signal);
        if (outcome === 'expired') needList = true;
        failures = 0;
      } catch (e) {
        if (signal.aborted) break;
        failures++;
        const delay = Math.min(30_000, 200 * 2 ** Math.min(failures, 8));
        log.warn({ informer: this.description, err: (e as Error).message, retryInMs: delay }, 'list/watch failed; retrying');
        // A failed list keeps needList; a failed watch resumes from the last resourceVersion.
        await sleepOn(this.options.clock ?? realClock, delay, signal);
      }
    }
  }

  private selectorQuery(): Record<string, string | undefined> {
    return { labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector };
  }

  private async relist(signal: AbortSignal): Promise<void> {
    const fresh = new Map<string, T>();
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.client.list(this.resource, this.options.namespace, {
        ...this.selectorQuery(),
        limit: this.options.pageSize ?? 500,
        continue: continueToken,
      });
      if (signal.aborted) return;
      const kind = String(page.kind ?? '').replace(/List$/, '');
      for (const item of page.items ?? []) {
        // Lists carry kind and apiVersion on the list only; put them back on each item.
        const object = { apiVersion: apiVersionOf(this.resource), kind, ...item } as T;
        fresh.set(keyOf(object), object);
      }
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    } while (continueToken);
    this.lists++;
    for (const [key, old] of this.cache) {
      if (!fresh.has(key)) {
        this.cache.delete(key);
        this.emit('delete', old);
      }
    }
    for (const [key, object] of fresh) {
      const old = this.cache.get(key);
      this.cache.set(key, object);
      if (!old) this.emit('add', object);
      else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion) this.emit('update', object, old);
    }
    this.resourceVersion = resourceVersion;
    if (!this.synced) {
      this.synced = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
  }

  /** Watches from the last resourceVersion until the watch ends; 'expired' when a relist is needed. */
  private async watch(signal: AbortSignal): Promise<'ended' | 'expired'> {
    const timeout = this.options.watchTimeoutSeconds ?? Math.round(300 + Math.random() * 300);
    const res = await this.client.open('GET', resourcePath(this.resource, this.options.namespace), {
      query: { ...this.selectorQuery(), watch: 1, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: timeout },
      longRunning: true,
      signal,
    });
    if (res.statusCode === 410) {
      res.resume();
      return 'expired';
    }
    if (res.statusCode !== 200) {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      throw new Error(`watch answered ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').slice(0, 200)}`);
    }
    let buffered = '';
    try {
      for await (const chunk of res) {
        buffered += (chunk as Buffer).toString('utf8');
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line && this.handleEvent(JSON.parse(line)) === 'expired') {
            res.destroy();
            return 'expired';
          }
        }
      }
    } catch (e) {
      if (signal.aborted) return 'ended';
      throw e;
    }
    return 'ended';
  }

  private handleEvent(event: WatchEvent<T>): 'expired' | undefined {
    if (event.type === 'ERROR') {
      const status = event.object as { code?: number; message?: string } | undefined;
      if (status?.code === 410) return 'expired';
      throw new Error(`watch error: ${status?.message ?? JSON.stringify(status)}`);
    }
    const object = event.object as T;
    const rv = object?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (event.type === 'BOOKMARK') return undefined;
    const key = keyOf(object);
    const old = this.cache.get(key);
    if (event.type === 'DELETED') {
      this.cache.delete(key);
      this.emit('delete', object);
    } else {
      this.cache.set(key, object);
      if (old) this.emit('update', object, old);
      else this.emit('add', object);
    }
    return undefined;
  }
}

/** Shares one informer per resource, namespace and selector among the controllers of a process. */
export class InformerFactory {
  private readonly informers = new Map<string, Informer>();
  private signal?: AbortSignal;

  constructor(
    readonly client: KubeClient,
    /** The clock every informer's retry back-off runs on (default the wall clock). */
    private readonly clock?: Clock,
  ) {}

  /** The informer for `apiVersion`/`kind` (resolved through discovery). */
  async forKind<T extends api.KubeObject = api.Unstructured>(apiVersion: string, kind: string, options: InformerOptions = {}): Promise<Informer<T>> {
    return this.forResource((await this.client.resourceFor(apiVersion, kind)) as unknown as ResourceRef<T>, options);
  }

  /** The shared informer of a resource (typed: `forResource<Node>(resources.nodes)`). */
  forResource<T extends api.KubeObject = api.Unstructured>(resource: ResourceRef<T>, options: InformerOptions = {}): Informer<T> {
    const key = JSON.stringify([resource.group, resource.version, resource.resource, options.namespace, options.labelSelector, options.fieldSelector]);
    const shared = this.informers.get(key);
    if (shared) return shared as unknown as Informer<T>;
    const informer = new Informer<T>(this.client, resource, { clock: this.clock, ...options });
    this.informers.set(key, informer as unknown as Informer);
    if (this.signal) informer.start(this.signal);
    return informer;
  }

  /** Starts every informer, now and as they are added, until `signal` aborts. */
  start(signal: AbortSignal): void {
    // One listener on the caller's signal; the informers listen on ours (any number of them).
    const own = new AbortController();
    setMaxListeners(0, own.signal);
    if (signal.aborted) own.abort();
    else signal.addEventListener('abort', () => own.abort(), { once: true });
    this.signal = own.signal;
    signal = own.signal;
    for (const informer of this.informers.values()) informer.start(signal);
  }

  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
  }

  /** The informers whose first list is not in yet (readiness). */
  unsynced(): string[] {
    return [...this.informers.values()].filter((i) => !i.hasSynced()).map((i) => i.description);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}
