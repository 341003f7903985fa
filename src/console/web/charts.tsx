// Small charts from the cluster's Prometheus (thanos-querier through the console, as the user):
// a range query drawn as an SVG line with its latest value, and the firing alerts. Prometheus has
// no watch, so these are asked again every 30 seconds; when the cluster has no Prometheus, or the
// user may not query it, the chart says why instead.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJSON } from './api.js';

const REFRESH_MS = 30_000;

interface RangeResult { data?: { result?: { metric: Record<string, string>; values: [number, string][] }[] } }
interface AlertsResult { data?: { alerts?: { labels: Record<string, string>; annotations?: Record<string, string>; state: string; activeAt?: string }[] } }

function usePrometheus<T>(path: string): { value?: T; error?: string } {
  const [state, setState] = useState<{ value?: T; error?: string }>({});
  useEffect(() => {
    let stopped = false;
    const ask = () => getJSON<T>(path, '/api/prometheus')
      .then((value) => !stopped && setState({ value }))
      .catch((e: Error) => !stopped && setState({ error: e instanceof ApiError && e.forbidden ? `Your user may not query Prometheus (it needs the cluster-monitoring-view role): ${e.message}` : e.message }));
    void ask();
    const timer = setInterval(ask, REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [path]);
  return state;
}

export function RangeChart({ title, query, unit }: { title: string; query: string; unit: string }) {
  const end = Math.floor(Date.now() / 1000 / 30) * 30;
  const path = `/api/v1/query_range?query=${encodeURIComponent(query)}&start=${end - 3600}&end=${end}&step=60`;
  const { value, error } = usePrometheus<RangeResult>(path);
  const points = (value?.data?.result?.[0]?.values ?? []).map(([t, v]) => [t, Number(v)] as const).filter(([, v]) => Number.isFinite(v));
  const width = 280;
  const height = 70;
  const max = Math.max(1e-9, ...points.map(([, v]) => v));
  // The time axis spans the samples there are (a young cluster has minutes, not the hour).
  const t0 = points.length ? points[0][0] : end - 3600;
  const span = Math.max(60, (points.length ? points[points.length - 1][0] : end) - t0);
  const line = points.map(([t, v]) => `${(((t - t0) / span) * width).toFixed(1)},${(height - (v / max) * (height - 6) - 3).toFixed(1)}`).join(' ');
  const latest = points.length ? points[points.length - 1][1] : undefined;
  const summary = latest === undefined ? 'no data' : `${latest.toFixed(latest < 10 ? 2 : 0)} ${unit} now, at most ${max.toFixed(max < 10 ? 2 : 0)} in the last ${Math.round(span / 60)} min`;
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      {error ? (
        <p class="notice notice-info">{error}</p>
      ) : (
        <>
          <svg viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={`${title}: ${summary}`}>
            <rect x="0" y="0" width={width} height={height} class="chart-bg" />
            {line && <polyline points={line} class="chart-line" />}
          </svg>
          <p class="chart-value">{summary}</p>
        </>
      )}
    </figure>
  );
}

export function FiringAlerts() {
  const { value, error } = usePrometheus<AlertsResult>('/api/v1/alerts');
  const firing = (value?.data?.alerts ?? []).filter((a) => a.state === 'firing');
  return (
    <figure class="chart">
      <figcaption>Firing alerts</figcaption>
      {error ? (
        <p class="notice notice-info">{error}</p>
      ) : !value ? (
        <p role="status">Asking Prometheus…</p>
      ) : firing.length === 0 ? (
        <p>None firing.</p>
      ) : (
        <ul class="alerts">
          {firing.map((a, i) => (
            <li key={i}><span class={`badge badge-${a.labels.severity === 'critical' ? 'bad' : 'unknown'}`}>{a.labels.severity ?? 'none'}</span> {a.labels.alertname}{a.annotations?.summary ? `: ${a.annotations.summary}` : ''}</li>
          ))}
        </ul>
      )}
    </figure>
  );
}
