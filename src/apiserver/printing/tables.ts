// Server-side printing for `kubectl get`: metav1 Tables, with the printer columns of each
// built-in kind (its strategy in kinds/) or a custom resource's additionalPrinterColumns (a
// Kubernetes JSONPath, first match). The column building blocks are in columns.ts.
//
// printing/ holds server-side printing: Tables (this file), columns and formatters (columns.ts)
// and the JSONPath subset printer columns and field selectors use (jsonpath.ts).
import { jsonPathFirst } from './jsonpath.js';
import { age, AGE_COLUMN, ageCell, column, NAME_COLUMN, type ColumnDefinition, type PrinterColumn } from './columns.js';
import { printerFor } from '../kinds/index.js';
import type * as api from '../../api/index.js';

// Names other modules and tests have always imported from here.
export { jsonPathFirst } from './jsonpath.js';
export { humanDuration } from './columns.js';

export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1' | 'meta.k8s.io/v1beta1';
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: ColumnDefinition[];
  rows: TableRow[];
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  includeObject?: IncludeObject;
  /** meta.k8s.io's version of the Table and its rows' PartialObjectMetadata; v1 unless asked. */
  version?: 'v1' | 'v1beta1';
  /** Omit column definitions (watch events after the first). */
  noHeaders?: boolean;
  /** For ages; defaults to Date.now(). */
  now?: number;
  resourceVersion?: string;
  continue?: string;
}



function rowObject(object: api.Unstructured, include: IncludeObject, apiVersion: Table['apiVersion']): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: rowMetadata(object.metadata) };
}

const strippedMetadata = new WeakMap<object, api.ObjectMeta>();

/**
 * A row's metadata: the object's, without managedFields. A Table is for display, and no printer
 * reads them (kubectl takes the namespace, labels and name from a row's metadata); kube-apiserver
 * sends them all the same, and for 10,000 Nodes they are two thirds of the Table and of kubectl's
 * time decoding it. Objects and lists keep them.
 * For the storage's shared, frozen metadata the copy is made once, frozen too (so tableJson's
 * cache of its JSON holds).
 */
function rowMetadata(metadata: api.ObjectMeta | undefined): api.ObjectMeta | undefined {
  if (metadata === undefined || metadata.managedFields === undefined) return metadata;
  const frozen = Object.isFrozen(metadata);
  let stripped = frozen ? strippedMetadata.get(metadata) : undefined;
  if (stripped === undefined) {
    const { managedFields: _managedFields, ...rest } = metadata;
    stripped = rest;
    if (frozen) strippedMetadata.set(metadata, Object.freeze(stripped));
  }
  return stripped;
}


function buildTable(columns: ColumnDefinition[], objects: api.Unstructured[], cells: (o: api.Unstructured) => unknown[], options: TableOptions): Table {
  const include = options.includeObject ?? 'Metadata';
  const apiVersion = `meta.k8s.io/${options.version ?? 'v1'}` as const;
  return {
    kind: 'Table',
    apiVersion,
    metadata: {
      ...(options.resourceVersion !== undefined ? { resourceVersion: options.resourceVersion } : {}),
      ...(options.continue ? { continue: options.continue } : {}),
    },
    columnDefinitions: options.noHeaders ? [] : columns,
    rows: objects.map((o) => {
      const row: TableRow = { cells: cells(o) };
      const included = rowObject(o, include, apiVersion);
      if (included !== undefined) row.object = included;
      return row;
    }),
  };
}

/**
 * JSON.stringify(table), the same text, with each row's PartialObjectMetadata written once per
 * metadata object when that object is frozen (the storage's shared decoded objects, which stand
 * for one revision and which no reader changes: ListOptions.shared), so that listing 10,000 Nodes
 * page by page, again and again, serializes only their cells. Anything else is written as
 * JSON.stringify writes it.
 */
export function tableJson(table: Table): string {
  const { rows, ...rest } = table;
  const head = JSON.stringify(rest);
  const parts: string[] = [];
  for (const row of rows) parts.push(rowJson(row));
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"rows":[${parts.join(',')}]}`;
}

const metadataJson = new WeakMap<object, string>();

function rowJson(row: TableRow): string {
  const object = row.object as { kind?: unknown; apiVersion?: unknown; metadata?: unknown } | undefined;
  const metadata = object?.metadata;
  if (
    object === undefined || typeof metadata !== 'object' || metadata === null || !Object.isFrozen(metadata) ||
    object.kind !== 'PartialObjectMetadata' || object.apiVersion !== 'meta.k8s.io/v1' || Object.keys(object).length !== 3 || Object.keys(row).length !== 2
  ) {
    return JSON.stringify(row);
  }
  let json = metadataJson.get(metadata);
  if (json === undefined) {
    json = JSON.stringify(object);
    metadataJson.set(metadata, json);
  }
  return `{"cells":${JSON.stringify(row.cells)},"object":${json}}`;
}

/** A Table for custom resources from their CRD's additionalPrinterColumns (Age when there are none). */
export function crdTable(printerColumns: PrinterColumn[] | undefined, objects: api.Unstructured[], options: TableOptions = {}): Table {
  const now = options.now ?? Date.now();
  if (!printerColumns || printerColumns.length === 0) {
    return buildTable([NAME_COLUMN, AGE_COLUMN], objects, (o) => [o.metadata?.name, age(o.metadata?.creationTimestamp, now)], options);
  }
  const columns = [NAME_COLUMN, ...printerColumns.map((c) => column(c.name, c.type, c.priority ?? 0, c.format ?? '', c.description ?? ''))];
  return buildTable(columns, objects, (o) => [
    o.metadata?.name,
    ...printerColumns.map((c) => {
      let value: unknown;
      try {
        value = jsonPathFirst(o, c.jsonPath);
      } catch {
        value = undefined;
      }
      if (value === undefined) return null;
      if (c.type === 'date') return age(value, now);
      if (c.type === 'integer' || c.type === 'number' || c.type === 'boolean') return value;
      return typeof value === 'string' ? value : JSON.stringify(value);
    }),
  ], options);
}


/** A Table of built-in objects with the columns kubectl users know for `resource` (Name and Age for kinds without their own). */
export function tableFor(resource: string, objects: api.Unstructured[], options: TableOptions = {}): Table {
  const now = options.now ?? Date.now();
  const printer = printerFor(resource) ?? { columns: [NAME_COLUMN, AGE_COLUMN], cells: (o: api.KubeObject, n: number) => [o.metadata?.name, ageCell(o, n)] };
  return buildTable(printer.columns, objects, (o) => printer.cells(o, now), options);
}
