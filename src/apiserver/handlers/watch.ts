// Watches: a chunked stream of `{"type","object"}` lines from a resourceVersion (or from the
// current state, sent first as ADDED), selectors applied to each event (an object that starts or
// stops matching is ADDED or DELETED for this watch), BOOKMARKs when asked for, 410 Expired as an
// ERROR event for a compacted revision, and an end after `timeoutSeconds`. `sendInitialEvents`
// (watch-list) as kube-apiserver serves it: with true, the current state first whatever the
// resourceVersion, closed by a BOOKMARK annotated `k8s.io/initial-events-end`; with false, none.
import { errors, type FieldProblem } from '../errors.js';
import type { AuthorizedContext } from '../filters/chain.js';
import { apiVersionOf, type ResourceType } from '../registry/resource-type.js';
import { StorageError, type KubeObject, type WatchEvent } from '../storage/types.js';
import { eventObjectWriter } from './output.js';
import { MATCH_ALL, parseResourceVersion, selectorFilter } from './read.js';
import type { ServerState } from './state.js';

/** What a watch event carries: an object, or a BOOKMARK or ERROR's object (which has no name). */
type EventObject = { kind?: string; apiVersion?: string; metadata: { resourceVersion?: string; [field: string]: unknown }; [field: string]: unknown };

/** A slow consumer may hold at most this much unsent data before its watch is ended. */
const MAX_BUFFERED = 64 * 1024 * 1024;

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

function bookmark(type: ResourceType, revision: number, annotations?: Record<string, string>): EventObject {
  return { kind: type.kind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: String(revision), ...(annotations ? { annotations } : {}) } };
}

/** kube's rules for `sendInitialEvents` and `resourceVersionMatch` on a watch (422 otherwise). */
function checkWatchList(initialEvents: boolean | undefined, resourceVersionMatch: string | undefined): void {
  const problems: FieldProblem[] = [];
  const forbidden = (message: string) => problems.push({ type: 'FieldValueForbidden', field: 'resourceVersionMatch', message: `Forbidden: ${message}` });
  if (initialEvents !== undefined && resourceVersionMatch !== 'NotOlderThan') forbidden('sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
  if (resourceVersionMatch) {
    if (initialEvents === undefined) forbidden('resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    if (resourceVersionMatch !== 'NotOlderThan') {
      problems.push({ type: 'FieldValueNotSupported', field: 'resourceVersionMatch', message: `Unsupported value: ${JSON.stringify(resourceVersionMatch)}: supported values: "NotOlderThan"` });
    }
  }
  if (problems.length > 0) throw errors.invalid('ListOptions', 'meta.k8s.io', '', problems);
}

/** Streams a watch of a collection, or of one object when `name` is given. */
export function serveWatch(ctx: AuthorizedContext, state: ServerState, type: ResourceType, namespace: string | undefined, name?: string): void {
  const { storage, resources } = state;
  const { query, request, reply } = ctx;
  const selected = selectorFilter(state, type, query);
  const filter = name === undefined ? selected : (o: KubeObject) => o.metadata.name === name && selected(o);
  const rvParam = query.string('resourceVersion');
  if (rvParam && rvParam !== '0') parseResourceVersion(rvParam);
  // setTimeout cannot wait longer than 2^31 - 1 ms.
  const timeoutSeconds = Math.min(query.count('timeoutSeconds') ?? 1800, 2_147_483);
  const bookmarks = query.bool('allowWatchBookmarks');
  const initialEvents = query.optionalBool('sendInitialEvents');
  checkWatchList(initialEvents, query.string('resourceVersionMatch'));
  const transform = eventObjectWriter(ctx, type);
  const prefix = resources.prefix(type, namespace);

  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  // Clients wait for the headers before they count a watch as established.
  res.flushHeaders();
  const recordEvent = state.watchEvents(type.group, type.version, type.kind);
  const send = (eventType: string, object: EventObject) => {
    // Events other than ERROR and BOOKMARK carry stored objects.
    const payload = transform && eventType !== 'ERROR' && eventType !== 'BOOKMARK' ? transform(object as KubeObject) : object;
    const line = JSON.stringify({ type: eventType, object: payload }) + '\n';
    recordEvent(Buffer.byteLength(line));
    res.write(line);
    if (res.writableLength > MAX_BUFFERED) stop();
  };
  let watcher: { stop(): void } | undefined;
  let closed = false;
  const timers: NodeJS.Timeout[] = [];
  const stop = () => {
    if (closed) return;
    closed = true;
    watcher?.stop();
    for (const t of timers) clearTimeout(t);
    state.watches.delete(stop);
    res.end();
  };
  state.watches.add(stop);
  request.raw.on('close', stop);
  res.on('close', stop);

  let from: number;
  if (initialEvents ?? (!rvParam || rvParam === '0')) {
    const current = storage.list(prefix, { filter });
    for (const item of current.items) send('ADDED', resources.present(type, item.object));
    from = current.revision;
    if (initialEvents) send('BOOKMARK', bookmark(type, from, { [INITIAL_EVENTS_END]: 'true' }));
  } else from = rvParam && rvParam !== '0' ? Number(rvParam) : storage.currentRevision();

  // With a selector, a change can carry an object into it or out of it: as kube's watch cache
  // does, the watcher sees ADDED, or DELETED with the object as it last matched at the change's
  // resourceVersion. Without one the object a change replaced is never read (nor decoded).
  const selective = selected !== MATCH_ALL;
  const onEvent = (event: WatchEvent) => {
    if (closed) return;
    const matchesNow = filter(event.object);
    if (event.type === 'MODIFIED' && selective) {
      const before = event.previous;
      const matchedBefore = before !== undefined && filter(before);
      if (matchesNow && !matchedBefore) return send('ADDED', resources.present(type, event.object));
      if (!matchesNow && matchedBefore) {
        const last = { ...before, metadata: { ...before.metadata, resourceVersion: event.object.metadata.resourceVersion } };
        return send('DELETED', resources.present(type, last));
      }
    }
    if (matchesNow) send(event.type, resources.present(type, event.object));
  };
  try {
    watcher = storage.watch(prefix, from, onEvent);
  } catch (e) {
    if (e instanceof StorageError && e.code === 'Expired') {
      send('ERROR', { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${from} (${storage.compactedRevision() + 1})`, reason: 'Expired', code: 410 });
      stop();
      return;
    }
    stop();
    throw e;
  }
  if (closed) watcher.stop();
  if (timeoutSeconds > 0) timers.push(setTimeout(stop, timeoutSeconds * 1000));
  if (bookmarks) {
    const interval = setInterval(() => {
      send('BOOKMARK', bookmark(type, storage.currentRevision()));
    }, state.bookmarkIntervalMs);
    timers.push(interval as unknown as NodeJS.Timeout);
  }
}
