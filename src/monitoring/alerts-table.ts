// `bosun adm alerts`' table: the alerts of Prometheus's /api/v1/alerts answer, as
// NAME SEVERITY STATE SINCE MESSAGE, oldest first. Pure.

/** One alert of Prometheus's /api/v1/alerts. */
export interface PrometheusAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  state: string;
  activeAt?: string;
  value?: string;
}

/** The alerts of an /api/v1/alerts answer; throws saying what is wrong with one that is not. */
export function alertsOf(body: unknown): PrometheusAlert[] {
  const answer = body as { status?: unknown; data?: { alerts?: unknown }; error?: unknown };
  if (!answer || typeof answer !== 'object') throw new Error('the alerts API answered something that is not JSON');
  if (answer.status !== 'success') throw new Error(`the alerts API answered ${String(answer.status)}${answer.error ? `: ${String(answer.error)}` : ''}`);
  const alerts = answer.data?.alerts;
  if (!Array.isArray(alerts)) throw new Error('the alerts API answer has no data.alerts list');
  return alerts.filter((a): a is PrometheusAlert => Boolean(a) && typeof a === 'object' && typeof (a as PrometheusAlert).labels === 'object');
}

/** A duration as kubectl prints ages: 45s, 12m, 3h, 2d. */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

export function alertsTable(alerts: PrometheusAlert[], now: number, options: { pending?: boolean } = {}): string {
  const shown = alerts
    .filter((a) => a.state === 'firing' || (options.pending && a.state === 'pending'))
    .sort((a, b) => (a.activeAt ?? '').localeCompare(b.activeAt ?? '') || (a.labels.alertname ?? '').localeCompare(b.labels.alertname ?? ''));
  if (shown.length === 0) return options.pending ? 'No firing or pending alerts.\n' : 'No firing alerts.\n';
  const rows = shown.map((a) => {
    const message = (a.annotations?.summary ?? a.annotations?.message ?? a.annotations?.description ?? '').replace(/\s+/g, ' ').trim();
    const since = a.activeAt && !Number.isNaN(Date.parse(a.activeAt)) ? age(now - Date.parse(a.activeAt)) : '';
    return [a.labels.alertname ?? '', a.labels.severity ?? '', a.state, since, message];
  });
  const header = ['NAME', 'SEVERITY', 'STATE', 'SINCE', 'MESSAGE'];
  const widths = header.slice(0, 4).map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `${cells.slice(0, 4).map((c, i) => c.padEnd(widths[i])).join('   ')}   ${cells[4]}`.trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}
