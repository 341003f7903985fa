// Building blocks of server-side printing shared by every kind's printer columns: column
// definitions, the Name and Age columns, ages exactly as kubectl shows them, and the small
// formatters (counts, `<none>`, conditions, label selectors) the printers use.
import type * as api from '../../api/index.js';
import { age } from '../../common/time.js';

export { age, humanDuration } from '../../common/time.js';

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
