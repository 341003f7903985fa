// A PromQL evaluator over a Prometheus-compatible HTTP API (`GET <url>/api/v1/query?query=…`), for
// conditional-update risks: the query must give exactly one sample whose value is 0 or 1.
import type { PromQLEvaluator } from './risks.js';

export function prometheusEvaluator(metricsUrl: string, timeoutMs = 10_000): PromQLEvaluator {
  const base = metricsUrl.replace(/\/+$/, '');
  return async (promql) => {
    const url = `${base}/api/v1/query?query=${encodeURIComponent(promql)}`;
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      throw new Error(`the metrics service ${base} is unreachable: ${(e as Error).message}`);
    }
    if (!res.ok) throw new Error(`the metrics service answered HTTP ${res.status} for ${promql}`);
    const body = (await res.json().catch(() => undefined)) as { status?: string; data?: { resultType?: string; result?: Array<{ value?: [number, string] }> } } | undefined;
    if (body?.status !== 'success') throw new Error(`the metrics service could not evaluate ${promql}`);
    const result = body.data?.result ?? [];
    if (body.data?.resultType === 'scalar') return Number((body.data as unknown as { result: [number, string] }).result[1]);
    if (result.length !== 1) throw new Error(`${promql} gave ${result.length} samples; a risk query must give exactly one`);
    return Number(result[0].value?.[1]);
  };
}
