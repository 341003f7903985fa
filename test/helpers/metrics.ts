// Scraping a component's /metrics as Prometheus does on OpenShift: HTTPS, a bearer token the API
// server authenticates and authorises. `ca` is the certificate to trust (a manager's
// metricsCertificate, the service CA); without one the certificate is not checked (a process's
// self-signed certificate, which the test cannot know).
import { request } from 'node:https';
import { eventually } from './eventually.js';
import type { TestApiServer } from './apiserver.js';
import { enableAccessControl } from '../../src/apiserver/auth/access-control.js';

export interface ScrapeResult {
  status: number;
  text: string;
}

export function scrape(address: string | undefined, options: { token?: string; ca?: string; path?: string; servername?: string } = {}): Promise<ScrapeResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      `https://${address}${options.path ?? '/metrics'}`,
      {
        headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
        ...(options.ca ? { ca: options.ca } : { rejectUnauthorized: false }),
        ...(options.servername ? { servername: options.servername } : {}),
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The metrics text once the endpoint answers 200 to `token` (the process may still be starting). */
export function scrapeWhen(address: string, token: string, timeoutMs = 20_000): Promise<string> {
  return eventually(`https://${address}/metrics to answer 200`, async () => {
    const r = await scrape(address, { token });
    return r.status === 200 ? r.text : undefined;
  }, timeoutMs);
}

/**
 * Turns on what delegated authorization needs on a test API server: TokenReview, the access
 * reviews and RBAC (the admin token stays allowed everything). Returns its stop.
 */
export async function withDelegatedAuth(api: { server: TestApiServer['server']; dataDir: string }): Promise<() => void> {
  const access = await enableAccessControl(api.server, api.dataDir);
  return () => access.stop();
}

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

/** The samples of https://<address>/metrics, scraped with `token` (throws unless 200). */
export async function scrapeSamples(address: string, token: string): Promise<Sample[]> {
  const r = await scrape(address, { token });
  if (r.status !== 200) throw new Error(`GET https://${address}/metrics: ${r.status} ${r.text.slice(0, 200)}`);
  return parseExposition(r.text);
}

/**
 * Scrapes with `samples` until `check` is satisfied (it returns why not, or undefined); the samples
 * that satisfied it. On timeout the error says the last reason.
 */
export function samplesUntil(samples: () => Promise<Sample[]>, what: string, check: (s: Sample[]) => Promise<string | undefined> | string | undefined, timeoutMs: number): Promise<Sample[]> {
  let last = '';
  return eventually(what, async () => {
    const s = await samples();
    last = (await check(s)) ?? '';
    return last ? undefined : s;
  }, { timeoutMs, detail: () => last });
}

/**
 * RBAC granting `get` on the non-resource URL /metrics to the ServiceAccount `serviceAccount` in
 * `default` (what a scraper's role grants), as YAML for `kubectl apply -f -`.
 */
export function metricsReader(name: string, serviceAccount: string): string {
  return `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ${name}}
rules:
- nonResourceURLs: ["/metrics"]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ${name}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${name}}
subjects:
- {kind: ServiceAccount, name: ${serviceAccount}, namespace: default}
`;
}
