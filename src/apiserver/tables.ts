// Server-side printing for `kubectl get`: metav1 Tables with the familiar columns of each
// built-in kind, the additionalPrinterColumns of custom resources (a Kubernetes JSONPath, first
// match), and human-readable ages exactly as kubectl shows them.

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: ColumnDefinition[];
  rows: TableRow[];
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableOptions {
  includeObject?: IncludeObject;
  /** Omit column definitions (watch events after the first). */
  noHeaders?: boolean;
  /** For ages; defaults to Date.now(). */
  now?: number;
  resourceVersion?: string;
  continue?: string;
}

type Obj = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// Durations

/** A duration the way kubectl prints ages (`45s`, `3m12s`, `25m`, `5h3m`, `20h`, `3d4h`, `120d`, `2y30d`). */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
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

function age(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string') return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

// ---------------------------------------------------------------------------------------------
// JSONPath (the subset printer columns use)

type Step = { kind: 'field'; name: string } | { kind: 'index'; index: number } | { kind: 'all' } | { kind: 'filter'; path: string[]; op: string; value: unknown };

function parseJsonPath(expression: string): Step[] {
  let expr = expression.trim();
  if (expr.startsWith('{') && expr.endsWith('}')) expr = expr.slice(1, -1).trim();
  if (expr.startsWith('$')) expr = expr.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < expr.length) {
    const ch = expr[i];
    if (ch === '.') {
      i++;
      if (expr[i] === '*') {
        steps.push({ kind: 'all' });
        i++;
        continue;
      }
      const m = /^[^.[\]]+/.exec(expr.slice(i));
      if (!m) continue;
      steps.push({ kind: 'field', name: m[0] });
      i += m[0].length;
    } else if (ch === '[') {
      const end = expr.indexOf(']', i);
      if (end < 0) throw new Error(`unterminated [ in JSONPath "${expression}"`);
      const inner = expr.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*') steps.push({ kind: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ kind: 'field', name: inner.slice(1, -1) });
      else {
        const f = /^\?\(@((?:\.[^.=!<>\s]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(\S+))\)$/.exec(inner);
        if (!f) throw new Error(`unsupported JSONPath filter "[${inner}]" in "${expression}"`);
        const literal = f[3] ?? f[4] ?? f[5];
        const value = f[3] !== undefined || f[4] !== undefined ? literal : literal === 'true' ? true : literal === 'false' ? false : Number.isNaN(Number(literal)) ? literal : Number(literal);
        steps.push({ kind: 'filter', path: f[1].slice(1).split('.'), op: f[2], value });
      }
    } else {
      const m = /^[^.[\]]+/.exec(expr.slice(i));
      if (!m) throw new Error(`unexpected "${ch}" in JSONPath "${expression}"`);
      steps.push({ kind: 'field', name: m[0] });
      i += m[0].length;
    }
  }
  return steps;
}

function evaluate(steps: Step[], value: unknown): unknown[] {
  let current: unknown[] = [value];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if (v === null || v === undefined) continue;
      switch (step.kind) {
        case 'field':
          if (typeof v === 'object' && !Array.isArray(v) && step.name in (v as Obj)) next.push((v as Obj)[step.name]);
          break;
        case 'index':
          if (Array.isArray(v)) {
            const idx = step.index < 0 ? v.length + step.index : step.index;
            if (idx >= 0 && idx < v.length) next.push(v[idx]);
          }
          break;
        case 'all':
          if (Array.isArray(v)) next.push(...v);
          else if (typeof v === 'object') next.push(...Object.values(v as Obj));
          break;
        case 'filter':
          if (Array.isArray(v)) {
            for (const item of v) {
              const [found] = evaluate(step.path.map((name) => ({ kind: 'field', name })), item);
              if (step.op === '==' ? found === step.value : found !== step.value) next.push(item);
            }
          }
          break;
      }
    }
    current = next;
  }
  return current;
}

const parsedPaths = new Map<string, Step[]>();

/** The first value a Kubernetes JSONPath selects in `object`, or undefined. */
export function jsonPathFirst(object: unknown, expression: string): unknown {
  let steps = parsedPaths.get(expression);
  if (!steps) {
    steps = parseJsonPath(expression);
    parsedPaths.set(expression, steps);
  }
  return evaluate(steps, object)[0];
}

// ---------------------------------------------------------------------------------------------
// Table assembly

function rowObject(object: Obj, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata };
}

function column(name: string, type = 'string', priority = 0, format = '', description = ''): ColumnDefinition {
  return { name, type, format, description, priority };
}

const NAME_COLUMN = column('Name', 'string', 0, 'name', 'Name must be unique within a namespace.');
const AGE_COLUMN = column('Age', 'string', 0, '', 'CreationTimestamp is a timestamp representing the server time when this object was created.');

function buildTable(columns: ColumnDefinition[], objects: Obj[], cells: (o: Obj) => unknown[], options: TableOptions): Table {
  const include = options.includeObject ?? 'Metadata';
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {
      ...(options.resourceVersion !== undefined ? { resourceVersion: options.resourceVersion } : {}),
      ...(options.continue ? { continue: options.continue } : {}),
    },
    columnDefinitions: options.noHeaders ? [] : columns,
    rows: objects.map((o) => {
      const row: TableRow = { cells: cells(o) };
      const included = rowObject(o, include);
      if (included !== undefined) row.object = included;
      return row;
    }),
  };
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** A Table for custom resources from their CRD's additionalPrinterColumns (Age when there are none). */
export function crdTable(printerColumns: PrinterColumn[] | undefined, objects: Obj[], options: TableOptions = {}): Table {
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

// ---------------------------------------------------------------------------------------------
// Built-in kinds

interface Printer {
  columns: ColumnDefinition[];
  cells: (o: Obj, now: number) => unknown[];
}

const count = (v: unknown): number => (Array.isArray(v) ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0);
const orNone = (v: unknown): string => (v === undefined || v === null || v === '' ? '<none>' : String(v));
const condition = (o: Obj, type: string): Obj | undefined => (o.status?.conditions ?? []).find((c: Obj) => c.type === type);
const selectorString = (sel: Obj | undefined): string => {
  if (!sel) return '<none>';
  const parts = Object.entries(sel.matchLabels ?? sel).filter(([k]) => k !== 'matchExpressions').map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) parts.push(`${e.key} ${String(e.operator).toLowerCase()} (${(e.values ?? []).join(',')})`);
  return parts.length ? parts.join(',') : '<none>';
};
const containerNames = (o: Obj): string => orNone((o.spec?.template?.spec?.containers ?? []).map((c: Obj) => c.name).join(','));
const containerImages = (o: Obj): string => orNone((o.spec?.template?.spec?.containers ?? []).map((c: Obj) => c.image).join(','));

function podStatus(o: Obj): string {
  if (o.metadata?.deletionTimestamp) return 'Terminating';
  let reason: string = o.status?.reason ?? o.status?.phase ?? 'Pending';
  for (const cs of o.status?.containerStatuses ?? []) {
    if (cs.state?.waiting?.reason) reason = cs.state.waiting.reason;
    else if (cs.state?.terminated?.reason) reason = cs.state.terminated.reason;
  }
  return reason;
}

function nodeStatus(o: Obj): string {
  const ready = condition(o, 'Ready');
  const parts = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (o.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(o: Obj): string {
  const roles = Object.keys(o.metadata?.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((r) => r !== '');
  const legacy = o.metadata?.labels?.['kubernetes.io/role'];
  if (legacy) roles.push(legacy);
  return roles.length ? [...new Set(roles)].sort().join(',') : '<none>';
}

const address = (o: Obj, type: string): string => orNone((o.status?.addresses ?? []).find((a: Obj) => a.type === type)?.address);

function servicePorts(o: Obj): string {
  const ports = (o.spec?.ports ?? []).map((p: Obj) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`);
  return ports.length ? ports.join(',') : '<none>';
}

function externalIP(o: Obj): string {
  const ingress = (o.status?.loadBalancer?.ingress ?? []).map((i: Obj) => i.ip ?? i.hostname);
  const ips = [...(o.spec?.externalIPs ?? []), ...ingress];
  if (ips.length) return ips.join(',');
  return o.spec?.type === 'LoadBalancer' ? '<pending>' : '<none>';
}

const ageCell = (o: Obj, now: number) => age(o.metadata?.creationTimestamp, now);

const PRINTERS: Record<string, Printer> = {
  namespaces: { columns: [NAME_COLUMN, column('Status'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, o.status?.phase ?? 'Active', ageCell(o, now)] },
  nodes: {
    columns: [NAME_COLUMN, column('Status'), column('Roles'), AGE_COLUMN, column('Version'), column('Internal-IP', 'string', 1), column('External-IP', 'string', 1), column('OS-Image', 'string', 1), column('Kernel-Version', 'string', 1), column('Container-Runtime', 'string', 1)],
    cells: (o, now) => [o.metadata.name, nodeStatus(o), nodeRoles(o), ageCell(o, now), orNone(o.status?.nodeInfo?.kubeletVersion), address(o, 'InternalIP'), address(o, 'ExternalIP'), orNone(o.status?.nodeInfo?.osImage), orNone(o.status?.nodeInfo?.kernelVersion), orNone(o.status?.nodeInfo?.containerRuntimeVersion)],
  },
  pods: {
    columns: [NAME_COLUMN, column('Ready'), column('Status'), column('Restarts', 'string'), AGE_COLUMN, column('IP', 'string', 1), column('Node', 'string', 1), column('Nominated Node', 'string', 1), column('Readiness Gates', 'string', 1)],
    cells: (o, now) => {
      const statuses: Obj[] = o.status?.containerStatuses ?? [];
      const total = (o.spec?.containers ?? []).length;
      const ready = statuses.filter((s) => s.ready).length;
      const restarts = statuses.reduce((n, s) => n + (s.restartCount ?? 0), 0);
      const gates: Obj[] = o.spec?.readinessGates ?? [];
      const gatesCell = gates.length ? `${gates.filter((g) => condition(o, g.conditionType)?.status === 'True').length}/${gates.length}` : '<none>';
      return [o.metadata.name, `${ready}/${total}`, podStatus(o), String(restarts), ageCell(o, now), orNone(o.status?.podIP), orNone(o.spec?.nodeName), orNone(o.status?.nominatedNodeName), gatesCell];
    },
  },
  services: {
    columns: [NAME_COLUMN, column('Type'), column('Cluster-IP'), column('External-IP'), column('Port(s)'), AGE_COLUMN, column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, o.spec?.type ?? 'ClusterIP', orNone(o.spec?.clusterIP), externalIP(o), servicePorts(o), ageCell(o, now), selectorString(o.spec?.selector)],
  },
  endpoints: {
    columns: [NAME_COLUMN, column('Endpoints'), AGE_COLUMN],
    cells: (o, now) => {
      const eps: string[] = [];
      for (const s of o.subsets ?? []) for (const a of s.addresses ?? []) for (const p of s.ports ?? [{}]) eps.push(p.port ? `${a.ip}:${p.port}` : a.ip);
      return [o.metadata.name, eps.length ? eps.slice(0, 3).join(',') + (eps.length > 3 ? ` + ${eps.length - 3} more...` : '') : '<none>', ageCell(o, now)];
    },
  },
  configmaps: { columns: [NAME_COLUMN, column('Data', 'integer'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, count(o.data) + count(o.binaryData), ageCell(o, now)] },
  secrets: { columns: [NAME_COLUMN, column('Type'), column('Data', 'integer'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, o.type ?? 'Opaque', count(o.data) + count(o.stringData), ageCell(o, now)] },
  serviceaccounts: { columns: [NAME_COLUMN, column('Secrets', 'integer'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, count(o.secrets), ageCell(o, now)] },
  events: {
    columns: [column('Last Seen'), column('Type'), column('Reason'), column('Object'), column('Message'), NAME_COLUMN],
    cells: (o, now) => [age(o.lastTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp, now), o.type ?? '', o.reason ?? '', `${String(o.involvedObject?.kind ?? o.regarding?.kind ?? '').toLowerCase()}/${o.involvedObject?.name ?? o.regarding?.name ?? ''}`, o.message ?? o.note ?? '', o.metadata.name],
  },
  leases: { columns: [NAME_COLUMN, column('Holder'), AGE_COLUMN], cells: (o, now) => [o.metadata.name, o.spec?.holderIdentity ?? '', ageCell(o, now)] },
  deployments: {
    columns: [NAME_COLUMN, column('Ready'), column('Up-to-date', 'integer'), column('Available', 'integer'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`, o.status?.updatedReplicas ?? 0, o.status?.availableReplicas ?? 0, ageCell(o, now), containerNames(o), containerImages(o), selectorString(o.spec?.selector)],
  },
  replicasets: {
    columns: [NAME_COLUMN, column('Desired', 'integer'), column('Current', 'integer'), column('Ready', 'integer'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, o.spec?.replicas ?? 1, o.status?.replicas ?? 0, o.status?.readyReplicas ?? 0, ageCell(o, now), containerNames(o), containerImages(o), selectorString(o.spec?.selector)],
  },
  daemonsets: {
    columns: [NAME_COLUMN, column('Desired', 'integer'), column('Current', 'integer'), column('Ready', 'integer'), column('Up-to-date', 'integer'), column('Available', 'integer'), column('Node Selector'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1)],
    cells: (o, now) => [o.metadata.name, o.status?.desiredNumberScheduled ?? 0, o.status?.currentNumberScheduled ?? 0, o.status?.numberReady ?? 0, o.status?.updatedNumberScheduled ?? 0, o.status?.numberAvailable ?? 0, selectorString(o.spec?.template?.spec?.nodeSelector), ageCell(o, now), containerNames(o), containerImages(o), selectorString(o.spec?.selector)],
  },
  statefulsets: {
    columns: [NAME_COLUMN, column('Ready'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1)],
    cells: (o, now) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`, ageCell(o, now), containerNames(o), containerImages(o)],
  },
  jobs: {
    columns: [NAME_COLUMN, column('Status'), column('Completions'), column('Duration'), AGE_COLUMN, column('Containers', 'string', 1), column('Images', 'string', 1), column('Selector', 'string', 1)],
    cells: (o, now) => {
      const complete = condition(o, 'Complete')?.status === 'True';
      const failed = condition(o, 'Failed')?.status === 'True';
      const start = Date.parse(o.status?.startTime ?? '');
      const end = Date.parse(o.status?.completionTime ?? '') || now;
      return [o.metadata.name, complete ? 'Complete' : failed ? 'Failed' : 'Running', `${o.status?.succeeded ?? 0}/${o.spec?.completions ?? 1}`, Number.isNaN(start) ? '' : humanDuration(end - start), ageCell(o, now), containerNames(o), containerImages(o), selectorString(o.spec?.selector)];
    },
  },
  poddisruptionbudgets: {
    columns: [NAME_COLUMN, column('Min Available'), column('Max Unavailable'), column('Allowed Disruptions', 'integer'), AGE_COLUMN],
    cells: (o, now) => [o.metadata.name, orNone(o.spec?.minAvailable ?? 'N/A'), orNone(o.spec?.maxUnavailable ?? 'N/A'), o.status?.disruptionsAllowed ?? 0, ageCell(o, now)],
  },
  customresourcedefinitions: { columns: [NAME_COLUMN, column('Created At', 'date')], cells: (o) => [o.metadata.name, o.metadata?.creationTimestamp ?? ''] },
  roles: { columns: [NAME_COLUMN, column('Created At', 'string')], cells: (o) => [o.metadata.name, o.metadata?.creationTimestamp ?? ''] },
  clusterroles: { columns: [NAME_COLUMN, column('Created At', 'string')], cells: (o) => [o.metadata.name, o.metadata?.creationTimestamp ?? ''] },
  rolebindings: {
    columns: [NAME_COLUMN, column('Role'), AGE_COLUMN, column('Users', 'string', 1), column('Groups', 'string', 1), column('ServiceAccounts', 'string', 1)],
    cells: (o, now) => bindingCells(o, now),
  },
  clusterrolebindings: {
    columns: [NAME_COLUMN, column('Role'), AGE_COLUMN, column('Users', 'string', 1), column('Groups', 'string', 1), column('ServiceAccounts', 'string', 1)],
    cells: (o, now) => bindingCells(o, now),
  },
};

function bindingCells(o: Obj, now: number): unknown[] {
  const subjects: Obj[] = o.subjects ?? [];
  const names = (kind: string) => subjects.filter((s) => s.kind === kind).map((s) => (kind === 'ServiceAccount' ? `${s.namespace}/${s.name}` : s.name)).join(', ');
  return [o.metadata.name, `${o.roleRef?.kind}/${o.roleRef?.name}`, ageCell(o, now), names('User'), names('Group'), names('ServiceAccount')];
}

/** Whether a built-in resource has its own columns (otherwise Name + Age). */
export function hasPrinter(resource: string): boolean {
  return resource in PRINTERS;
}

/** A Table of built-in objects with the columns kubectl users know for `resource`. */
export function tableFor(resource: string, objects: Obj[], options: TableOptions = {}): Table {
  const now = options.now ?? Date.now();
  const printer = PRINTERS[resource] ?? { columns: [NAME_COLUMN, AGE_COLUMN], cells: (o: Obj, n: number) => [o.metadata?.name, ageCell(o, n)] };
  return buildTable(printer.columns, objects, (o) => printer.cells(o, now), options);
}
