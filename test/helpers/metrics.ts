// Reads a component's metrics as Prometheus does: GET /metrics on the component manager's
// --metrics-listen address, the exposition text parsed into samples. (One place to change when
// the listener asks for TLS and a token.)
import { get } from 'node:http';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus's text format, samples only (HELP and TYPE lines skipped). */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** GET http://<address>/metrics → its samples (throws unless 200). */
export function scrape(address: string): Promise<Sample[]> {
  return new Promise((resolve, reject) => {
    const req = get(`http://${address}/metrics`, { agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(parseExposition(body)) : reject(new Error(`GET /metrics: ${res.statusCode} ${body.slice(0, 200)}`))));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('GET /metrics timed out')));
  });
}

/** The samples of `name` whose labels include `labels`. */
export function series(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one sample of `name` with `labels` (undefined when there is none; throws when several). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = series(samples, name, labels);
  if (found.length > 1) throw new Error(`${found.length} series of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
