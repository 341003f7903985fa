// An event recorder as client-go's: core/v1 Events about an object, named <object>.<hex time>,
// with source component and host. Repeats of the same event (same object, type, reason and
// message) within the aggregation window are not new Events: the first one's count goes up and
// its lastTimestamp moves, so a hot loop shows as one line with a count rather than a flood. The
// events remembered for that are a least-recently-used cache of 4096, as client-go's correlator:
// recording costs the same with ten thousand nodes' events behind it as with one.
// Recording never throws: a failure to record is logged and the caller goes on.
import { hostname } from 'node:os';
import { logger } from '../common/log.js';
import { type KubeClient, isNotFound } from './client.js';
import type * as api from '../api/index.js';
import { rfc3339 } from '../common/time.js';
import { resources } from './resources.js';
import { type Clock, realClock } from './clock.js';

const log = logger('events');
const EVENTS = resources.events;

export type EventKind = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  component: string;
  host?: string;
  /** How long repeats count into the same Event (default 10 minutes, as client-go). */
  aggregationWindowMs?: number;
  /** Namespace for events about cluster-scoped objects (default "default"). */
  clusterScopedNamespace?: string;
  /** The clock of the aggregation window and the events' times (default the wall clock). */
  clock?: Clock;
  /** How many distinct events are remembered for aggregation, least recently used forgotten first (default 4096, as client-go's correlator). */
  cacheSize?: number;
}

interface Recorded {
  name: string;
  namespace: string;
  count: number;
  firstAt: number;
}

export class EventRecorder {
  private readonly recent = new Map<string, Recorded>();
  private readonly host: string;

  constructor(
    private readonly client: KubeClient,
    private readonly options: EventRecorderOptions,
  ) {
    this.host = options.host ?? (process.env.HOSTNAME || hostname());
  }

  /** Records an event about `object` (awaitable; never rejects). */
  async event(object: api.KubeObject, type: EventKind, reason: string, message: string): Promise<void> {
    try {
      await this.record(object, type, reason, message);
    } catch (e) {
      log.warn({ err: (e as Error).message, reason, object: object.metadata?.name }, 'could not record an event');
    }
  }

  private async record(object: api.KubeObject, type: EventKind, reason: string, message: string): Promise<void> {
    const meta: Partial<api.ObjectMeta> = object.metadata ?? {};
    const namespace = meta.namespace ?? this.options.clusterScopedNamespace ?? 'default';
    const key = JSON.stringify([object.apiVersion, object.kind, meta.namespace, meta.name, meta.uid, type, reason, message]);
    const now = (this.options.clock ?? realClock).now();
    const window = this.options.aggregationWindowMs ?? 600_000;
    const seen = this.recent.get(key);
    if (seen && now - seen.firstAt < window) {
      seen.count++;
      this.remember(key, seen);
      try {
        await this.client.mergePatch(EVENTS, seen.name, seen.namespace, { count: seen.count, lastTimestamp: rfc3339(new Date(now)) });
        return;
      } catch (e) {
        if (!isNotFound(e)) throw e;
        this.recent.delete(key); // the Event was deleted: record a new one
      }
    }
    const name = `${meta.name ?? 'unknown'}.${(now * 1_000_000 + Math.floor(Math.random() * 1_000_000)).toString(16)}`;
    const timestamp = rfc3339(new Date(now));
    await this.client.create(EVENTS, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: { apiVersion: object.apiVersion, kind: object.kind, name: meta.name, namespace: meta.namespace, uid: meta.uid, resourceVersion: meta.resourceVersion },
      type,
      reason,
      message,
      source: { component: this.options.component, host: this.host },
      reportingComponent: this.options.component,
      reportingInstance: this.host,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      count: 1,
    });
    this.remember(key, { name, namespace, count: 1, firstAt: now });
  }

  /** Marks `key` the most recently used (a Map iterates in insertion order) and forgets the least recently used beyond the cache's size. */
  private remember(key: string, recorded: Recorded): void {
    this.recent.delete(key);
    this.recent.set(key, recorded);
    const size = this.options.cacheSize ?? 4096;
    for (const oldest of this.recent.keys()) {
      if (this.recent.size <= size) break;
      this.recent.delete(oldest);
    }
  }
}
