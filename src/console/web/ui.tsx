// What every page is built from: a page frame, tables, conditions, times, and the explanation of
// an API error — a refusal says which permission the page needs, any other error is the API's
// own message.
import type { ComponentChildren } from 'preact';
import { memo } from 'preact/compat';
import { useEffect, useState } from 'preact/hooks';
import type { ApiError } from './api.js';
import type { Kind } from './resources.js';

/** A condition as any kind has it (some schemas leave every field optional). */
export interface Condition { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string | null }

export function Page({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-header">
        <h1 id="page-title">{title}</h1>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** Why a list or object cannot be shown. */
export function ApiProblem({ error, kind, namespace, what }: { error: ApiError; kind?: Kind; namespace?: string; what?: string }) {
  const subject = what ?? (kind ? kind.plural : 'this');
  if (error.forbidden && kind) {
    const where = kind.namespaced ? (namespace ? ` in namespace ${namespace}` : ' in all namespaces') : '';
    const group = kind.group || 'core';
    return (
      <div class="notice notice-forbidden" role="status">
        <p><strong>Your user may not list {subject}{where}.</strong></p>
        <p>
          This page needs <code>list</code> and <code>watch</code> on <code>{kind.plural}</code> ({group}){where}
          {kind.namespaced
            ? namespace ? '. Choose another namespace above, or ask for a role there.' : ': choose a namespace you may read in the header, or ask for a ClusterRoleBinding that grants it in all namespaces.'
            : ', which only a cluster role bound cluster-wide grants (a ClusterRoleBinding); a role bound in a namespace, such as view, cannot.'}
        </p>
        <p class="api-message">The API server said: {error.message}</p>
      </div>
    );
  }
  return (
    <div class="notice notice-error" role="alert">
      <p><strong>{error.code === 404 ? `No ${subject} here` : `Cannot show ${subject}`}</strong></p>
      <p class="api-message">{error.message}</p>
    </div>
  );
}

export interface Column<T> {
  title: string;
  cell: (row: T) => ComponentChildren;
}

/** One row: drawn again only when its object changed (a watch event replaces just that object, so
 *  a change to one node of a thousand redraws one row, not the table). The columns of a table are
 *  the same on every render. */
const TableRow = memo(
  function TableRow<T>({ row, columns }: { row: T; columns: Column<T>[] }) {
    return <tr>{columns.map((c) => <td key={c.title}>{c.cell(row)}</td>)}</tr>;
  },
  (before, after) => before.row === after.row,
) as <T>(props: { row: T; columns: Column<T>[] }) => preact.JSX.Element;

export function Table<T>({ caption, columns, rows, rowKey, empty }: { caption: string; columns: Column<T>[]; rows: T[]; rowKey: (row: T) => string; empty?: string }) {
  return (
    <div class="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>{columns.map((c) => <th scope="col" key={c.title}>{c.title}</th>)}</tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr><td colSpan={columns.length} class="empty">{empty ?? 'None.'}</td></tr>
          ) : (
            rows.map((row) => <TableRow key={rowKey(row)} row={row} columns={columns} />)
          )}
        </tbody>
      </table>
    </div>
  );
}

/** A list's state: loading, an error, or the table. */
export function ListBody<T>({ state, kind, namespace, children }: { state: { loaded: boolean; error?: ApiError; items: T[] }; kind: Kind; namespace?: string; children: ComponentChildren }) {
  if (state.error && state.items.length === 0) return <ApiProblem error={state.error} kind={kind} namespace={namespace} />;
  if (!state.loaded) return <p class="loading" role="status">Loading {kind.plural}…</p>;
  return <>{state.error && <ApiProblem error={state.error} kind={kind} namespace={namespace} />}{children}</>;
}

export const conditionOf = (o: { status?: { conditions?: Condition[] | null } | null } | undefined, type: string): Condition | undefined =>
  (o?.status?.conditions ?? []).find((c) => c.type === type);

/** A condition's status as a badge; `good` is the status that is healthy. */
export function StatusBadge({ condition, good = 'True', label }: { condition?: Condition; good?: string; label?: string }) {
  const status = condition?.status ?? 'Unknown';
  const tone = !condition ? 'unknown' : status === good ? 'ok' : status === 'Unknown' ? 'unknown' : 'bad';
  return <span class={`badge badge-${tone}`} title={condition?.message || undefined}>{label ?? status}</span>;
}

export function Conditions({ conditions }: { conditions?: Condition[] | null }) {
  const list = conditions ?? [];
  if (!list.length) return <span class="muted">no conditions</span>;
  return (
    <details>
      <summary>{list.length} conditions</summary>
      <dl class="conditions">
        {list.map((c) => (
          <div key={c.type ?? ''}>
            <dt>{c.type} <StatusBadge condition={c} good={c.type === 'Degraded' || c.type === 'Progressing' || c.type === 'Failing' ? 'False' : 'True'} /></dt>
            <dd>{c.reason ? <code>{c.reason}</code> : null} {c.message} {c.lastTransitionTime ? <span class="muted">(<Age time={c.lastTransitionTime} /> ago)</span> : null}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

/** How long ago an RFC 3339 time was, as kubectl prints ages (5s, 3m, 2h, 4d). */
export function age(time: string | undefined | null, now = Date.now()): string {
  const t = time ? Date.parse(time) : NaN;
  if (Number.isNaN(t)) return '-';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** Everything showing an age, told each second that time passed (one timer for the page). */
const ageWatchers = new Set<() => void>();
let ageTimer: ReturnType<typeof setInterval> | undefined;

function watchAges(tick: () => void): () => void {
  ageWatchers.add(tick);
  ageTimer ??= setInterval(() => ageWatchers.forEach((w) => w()), 1000);
  return () => {
    ageWatchers.delete(tick);
    if (ageWatchers.size === 0 && ageTimer !== undefined) {
      clearInterval(ageTimer);
      ageTimer = undefined;
    }
  };
}

/**
 * An age that keeps counting: it draws itself again when its text changes (each second under two
 * minutes, each minute after), although the row around it is drawn only when its object changes.
 */
export function Age({ time }: { time: string | undefined | null }) {
  const [text, setText] = useState(() => age(time));
  useEffect(() => {
    setText(age(time));
    return watchAges(() => setText(age(time)));
  }, [time]);
  return <>{text}</>;
}

/** A value or a dash for absent and empty ones (null fields render). */
export const show = (v: unknown): string => (v === undefined || v === null || v === '' ? '-' : String(v));

/** An object's row key in a table of several namespaces: namespace/name. */
export const objectKey = (o: { metadata: { namespace?: string; name: string } }): string => `${o.metadata.namespace}/${o.metadata.name}`;

/** A Namespace column's cell: the object's namespace, or '-'. */
export const namespaceCell = (o: { metadata: { namespace?: string } }): string => show(o.metadata.namespace);

/** An action's outcome beside its button: the API's message on failure. */
export function Outcome({ outcome }: { outcome?: { ok: boolean; message: string } }) {
  if (!outcome) return null;
  return <span class={outcome.ok ? 'outcome ok' : 'outcome bad'} role={outcome.ok ? 'status' : 'alert'}>{outcome.message}</span>;
}
