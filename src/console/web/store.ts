// Live lists: list, then watch from the list's resourceVersion (a streamed fetch of
// `?watch=1`, newline-delimited events), as an informer does — no polling. A watch that ends is
// resumed from the last resourceVersion seen; 410 Gone relists. Events are applied in batches, at
// most one render per animation frame, so a thousand nodes changing at once stay one repaint.
// A list that is not allowed keeps its Status (403 and the API's message) for the page to explain.
import { useEffect, useState } from 'preact/hooks';
import type { KubeObject } from '../../api/meta.js';
import { ApiError, call, errorOf } from './api.js';

export type { KubeObject };

export interface ListState<T> {
  items: T[];
  loaded: boolean;
  error?: ApiError;
}

type Event<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: T & { code?: number; message?: string; reason?: string } };

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const byName = (a: KubeObject, b: KubeObject) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0);

/** The collection path of a resource: /api/v1/nodes, /apis/group/version/namespaces/ns/plural. */
export function collection(group: string, version: string, plural: string, namespace?: string): string {
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return namespace ? `${base}/namespaces/${namespace}/${plural}` : `${base}/${plural}`;
}

const frame = (fn: () => void) => (typeof requestAnimationFrame === 'function' && document.visibilityState === 'visible' ? requestAnimationFrame(() => fn()) : setTimeout(fn, 16));

/** A live list of the objects at `path` (with `query`, e.g. fieldSelector=…); undefined path: none. */
export function useList<T extends KubeObject>(path: string | undefined, query = ''): ListState<T> {
  const [state, setState] = useState<ListState<T>>({ items: [], loaded: false });
  useEffect(() => {
    if (!path) return undefined;
    const stop = new AbortController();
    const objects = new Map<string, T>();
    let scheduled = false;
    const publish = () => {
      if (scheduled) return;
      scheduled = true;
      frame(() => {
        scheduled = false;
        if (!stop.signal.aborted) setState({ items: [...objects.values()].sort(byName), loaded: true });
      });
    };
    const fail = (error: ApiError) => !stop.signal.aborted && setState((s) => ({ ...s, loaded: true, error }));
    const sep = query ? '&' : '';
    let retryMs = 500;

    async function list(): Promise<string | undefined> {
      const response = await call(`${path}?${query}`, { signal: stop.signal });
      if (!response.ok) {
        const error = await errorOf(response);
        // A server's trouble passes; a refusal or an unknown resource is shown and stays.
        if (error.code >= 500 || error.code === 429) throw error;
        fail(error);
        return undefined;
      }
      const body = (await response.json()) as { items?: T[]; metadata?: { resourceVersion?: string } };
      objects.clear();
      for (const o of body.items ?? []) objects.set(keyOf(o), o);
      setState({ items: [...objects.values()].sort(byName), loaded: true });
      return body.metadata?.resourceVersion;
    }

    /** Watches from `rv` until the stream ends; the last resourceVersion seen, or undefined for 410. */
    async function watch(rv: string): Promise<string | undefined> {
      const response = await call(`${path}?${query}${sep}watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`, { signal: stop.signal });
      if (response.status === 410) return undefined;
      if (!response.ok || !response.body) throw await errorOf(response);
      retryMs = 500;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      let last = rv;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return last;
        buffered += value;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (!line) continue;
          const event = JSON.parse(line) as Event<T>;
          if (event.type === 'ERROR') {
            if (event.object.code === 410) return undefined;
            throw new ApiError(event.object.code ?? 500, event.object.reason ?? '', event.object.message ?? 'watch error');
          }
          last = event.object.metadata.resourceVersion ?? last;
          if (event.type === 'BOOKMARK') continue;
          if (event.type === 'DELETED') objects.delete(keyOf(event.object));
          else objects.set(keyOf(event.object), event.object);
          publish();
        }
      }
    }

    void (async () => {
      let rv: string | undefined;
      while (!stop.signal.aborted) {
        try {
          rv ??= await list();
          if (rv === undefined) return; // not allowed, or no such resource: the error is shown
          rv = await watch(rv);
        } catch (e) {
          if (stop.signal.aborted) return;
          if (e instanceof ApiError) fail(e);
          await new Promise((resolve) => setTimeout(resolve, retryMs));
          retryMs = Math.min(retryMs * 2, 10_000);
        }
      }
    })();
    return () => stop.abort();
  }, [path, query]);
  return state;
}

/** The one object of a name, live (a list with a field selector). */
export function useObject<T extends KubeObject>(path: string | undefined, name: string): { object?: T; loaded: boolean; error?: ApiError } {
  const s = useList<T>(path, `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`);
  return { object: s.items[0], loaded: s.loaded, error: s.error };
}
