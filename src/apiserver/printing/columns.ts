// Building blocks of server-side printing shared by every kind's printer columns: column
// definitions, the Name and Age columns, ages exactly as kubectl shows them, and the small
// formatters (counts, `<none>`, conditions, label selectors) the printers use.
import type * as api from '../../api/index.js';

/** A column of a metav1 Table. */
export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** A custom resource's additionalPrinterColumn: a column and the JSONPath its cells come from. */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** The columns and cells of one kind for `kubectl get`. */
export interface Printer<T extends api.KubeObject = api.Unstructured> {
  columns: ColumnDefinition[];
  cells: (o: T, now: number) => unknown[];
}


/** A duration the way kubectl prints ages (`45s`, `3m12s`, `25m`, `5h3m`, `20h`, `3d4h`, `120d`, `2y30d`). */
export function humanDuration(ms: number): string {
  // Truncated toward zero like Go's int(d.Seconds()): up to 1.999 s in the future still reads "0s".
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const d = Math.floor(hours / 24) % 365;
    return d === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${d}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

export function age(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string') return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

export function column(name: string, type = 'string', priority = 0, format = '', description = ''): ColumnDefinition {
  return { name, type, format, description, priority };
}

export const NAME_COLUMN = column('Name', 'string', 0, 'name', 'Name must be unique within a namespace.');
export const AGE_COLUMN = column('Age', 'string', 0, '', 'CreationTimestamp is a timestamp representing the server time when this object was created.');

export const ageCell = (o: api.KubeObject, now: number): string => age(o.metadata?.creationTimestamp, now);
export const count = (v: unknown): number => (Array.isArray(v) ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0);
export const orNone = (v: unknown): string => (v === undefined || v === null || v === '' ? '<none>' : String(v));
/** The condition of `type` in an object's status.conditions, when it has one. */
export const condition = (o: { status?: unknown }, type: string): api.Condition | undefined => {
  const conditions = (o.status as { conditions?: api.Condition[] } | undefined)?.conditions;
  return (conditions ?? []).find((c) => c.type === type);
};
/** A label selector as kubectl prints it; a bare map of labels (a Service's selector) too. */
export const selectorString = (sel: api.LabelSelector | Record<string, string> | undefined): string => {
  if (!sel) return '<none>';
  const selector = sel as api.LabelSelector;
  const parts = Object.entries(selector.matchLabels ?? sel).filter(([k]) => k !== 'matchExpressions').map(([k, v]) => `${k}=${String(v)}`);
  for (const e of selector.matchExpressions ?? []) parts.push(`${e.key} ${String(e.operator).toLowerCase()} (${(e.values ?? []).join(',')})`);
  return parts.length ? parts.join(',') : '<none>';
};
