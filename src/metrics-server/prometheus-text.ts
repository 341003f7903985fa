// The Prometheus text format as far as the kubelet's /metrics/resource uses it: `# HELP`/`# TYPE`
// comments, and samples `name{label="value",…} value [timestamp_ms]`. Pure.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** The sample's own time (ms since the epoch), when the line carries one. */
  timestampMs?: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/y;

function unescape(value: string): string {
  return value.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** The samples of a scrape; lines that are not samples are skipped, a malformed sample throws. */
export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample: ${line.slice(0, 120)}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      let l: RegExpExecArray | null;
      while (LABEL.lastIndex < m[2].length && (l = LABEL.exec(m[2]))) labels[l[1]] = unescape(l[2]);
      if (LABEL.lastIndex < m[2].length) throw new Error(`malformed labels: ${line.slice(0, 120)}`);
    }
    const value = parseValue(m[3]);
    if (Number.isNaN(value) && m[3] !== 'NaN') throw new Error(`malformed value: ${line.slice(0, 120)}`);
    out.push({ name: m[1], labels, value, ...(m[4] !== undefined ? { timestampMs: Number(m[4]) } : {}) });
  }
  return out;
}
