// Events, core/v1 and events.k8s.io/v1: the field selectors `kubectl get events` and
// controllers use, and the LAST SEEN / TYPE / REASON / OBJECT columns, which read either form.
import { age, column, type Printer } from '../printing/columns.js';
import { builtinType, type KindStrategy } from './strategy.js';
import type * as api from '../../api/index.js';

/** An Event of either API: core/v1's, or events.k8s.io/v1's (regarding, note, reportingController). */
type AnyEvent = api.Event & { regarding?: api.ObjectReference; note?: string; reportingController?: string };

const printer: Printer<AnyEvent> = {
  columns: [column('Last Seen'), column('Type'), column('Reason'), column('Object'), column('Subobject', 'string', 1), column('Source', 'string', 1), column('Message'), column('First Seen', 'string', 1), column('Count', 'string', 1), column('Name', 'string', 1, 'name')],
  cells: (o, now) => {
    const first = age(o.firstTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp, now);
    const last = o.series?.lastObservedTime ? age(o.series.lastObservedTime, now) : o.lastTimestamp ? age(o.lastTimestamp, now) : first;
    const count = o.series?.count ?? (o.count || 1);
    const involved: api.ObjectReference = o.involvedObject ?? o.regarding ?? {};
    const kind = String(involved.kind ?? '').toLowerCase();
    const source = o.source?.component ? `${o.source.component}${o.source.host ? `, ${o.source.host}` : ''}` : `${o.reportingController ?? o.reportingComponent ?? ''}${o.reportingInstance ? `, ${o.reportingInstance}` : ''}`;
    return [last, o.type ?? '', o.reason ?? '', involved.name ? `${kind}/${involved.name}` : kind, involved.fieldPath ?? '', source, String(o.message ?? o.note ?? '').trim(), first, count, o.metadata.name];
  },
};

export const coreEvents: KindStrategy<AnyEvent> = {
  type: builtinType('', 'v1', 'events', 'Event', {
    shortNames: ['ev'],
    fieldSelectors: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'],
  }),
  // kube's `source`: the source component, else the reporting controller (JSON `reportingComponent`).
  fieldValues: { source: (o) => String(o.source?.component || o.reportingComponent || '') },
  printer,
};

export const events: KindStrategy<AnyEvent> = {
  type: builtinType('events.k8s.io', 'v1', 'events', 'Event', { shortNames: ['ev'] }),
  printer,
};
