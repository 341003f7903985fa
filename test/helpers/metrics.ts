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
