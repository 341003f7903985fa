// Evaluating a PromQL risk rule as OpenShift's CVO does (pkg/clusterconditions/promql): an
// instant query, `GET <url>/api/v1/query?query=…` (GET, because kube-rbac-proxy in front of
// thanos-querier maps POST to the verb create), with the CVO's bearer token, verifying the
// server with the service CA. The answer must be a vector of exactly one sample valued 0 (the
// risk does not apply) or 1 (it applies); a scalar, a matrix, no sample, two samples or another
// value is an error naming the query.
//
// The cluster has no service DNS for the CVO (a host-network pod in OpenShift; a host process in
// bosun): a host `<service>.<namespace>.svc[.cluster.local]` is looked up through the API as the
// Service's clusterIP on every query (the Service may be recreated), and the connection goes
// there with the DNS name as TLS server name, so the serving certificate is checked against the
// name the service CA signed it for.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Where the CVO asks by default: OpenShift's thanos-querier (port `web`). */
export const DEFAULT_PROMQL_URL = 'https://thanos-querier.openshift-monitoring.svc:9091';
/** The CVO's service-account token, as a pod sees it. */
export const DEFAULT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';
/** The service CA, where OpenShift's CVO Deployment mounts ConfigMap openshift-service-ca.crt. */
export const DEFAULT_CA_FILE = '/etc/tls/service-ca/service-ca.crt';

export interface PromQLTarget {
  /** The query service's base URL (http: or https:). */
  url: string;
  /** PEM bundle to verify an https server with (undefined: the system's roots); throws when it cannot be read. Read per query. */
  ca?: () => Promise<string | undefined>;
  /** The bearer token to send (undefined: none). Read per query, so rotated tokens are used. */
  token?: () => Promise<string | undefined>;
  /** The clusterIP of a Service, for hosts `<name>.<namespace>.svc`; without it such hosts go to DNS. */
  serviceIP?: (namespace: string, name: string) => Promise<string | undefined>;
  /** How long one query may take (default 30 s: the status loop waits on it). */
  timeoutMs?: number;
}

/** `<name>.<namespace>.svc` or `….svc.cluster.local`: a Service of the cluster. */
export function serviceOfHost(host: string): { namespace: string; name: string } | undefined {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.svc(\.cluster\.local)?\.?$/.exec(host);
  return m ? { name: m[1], namespace: m[3] } : undefined;
}

/** A query as messages show it: on one line. */
export const oneLine = (promql: string) => promql.replace(/\s+/g, ' ').trim();

interface QueryBody {
  status?: string;
  error?: string;
  errorType?: string;
  data?: { resultType?: string; result?: unknown };
}

const TLS_HINTS: Record<string, string> = {
  SELF_SIGNED_CERT_IN_CHAIN: 'the server certificate is not signed by the configured CA bundle',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the server certificate is self-signed and not in the configured CA bundle',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the server certificate is not signed by the configured CA bundle',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the server certificate is not signed by the configured CA bundle',
  CERT_SIGNATURE_FAILURE: 'the server certificate is not signed by the configured CA bundle',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the server certificate is not valid for the host name',
  CERT_HAS_EXPIRED: 'the server certificate has expired',
};

/**
 * A function answering whether a PromQL query says the risk applies (true for 1, false for 0);
 * it throws an Error naming the query and the fault otherwise.
 */
export function promqlMatcher(target: PromQLTarget): (promql: string) => Promise<boolean> {
  const base = new URL(target.url);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`the PromQL service URL ${target.url} is neither http nor https`);
  const service = serviceOfHost(base.hostname);
  return async (promql) => {
    const shown = oneLine(promql);
    const url = new URL(`${base.pathname.replace(/\/+$/, '')}/api/v1/query`, base);
    url.searchParams.set('query', promql);
    let address = base.hostname;
    if (service && target.serviceIP) {
      let ip: string | undefined;
      try {
        ip = await target.serviceIP(service.namespace, service.name);
      } catch (e) {
        throw new Error(`could not look up Service ${service.namespace}/${service.name} for ${base.host}: ${(e as Error).message}`);
      }
      if (!ip || ip === 'None') throw new Error(`Service ${service.namespace}/${service.name} (${base.host}) ${ip === 'None' ? 'is headless' : 'does not exist or has no clusterIP'}, so the PromQL service cannot be reached`);
      address = ip;
    }
    const [ca, token] = await Promise.all([base.protocol === 'https:' ? target.ca?.() : undefined, target.token?.()]);
    const headers: Record<string, string> = { accept: 'application/json', host: base.host };
    if (token) headers.authorization = `Bearer ${token}`;
    const where = `${base.origin}${address !== base.hostname ? ` (${address})` : ''}`;
    let res: { status: number; statusText: string; text: string };
    try {
      res = await get(url, address, headers, base.protocol === 'https:' ? { ca, servername: base.hostname } : undefined, target.timeoutMs ?? 30_000);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      const hint = err.code ? TLS_HINTS[err.code] : undefined;
      throw new Error(`could not query the PromQL service ${where}: ${err.message}${hint ? ` (${hint}${ca ? '' : '; no CA bundle was configured'})` : ''}`);
    }
    let body: QueryBody | undefined;
    try {
      body = JSON.parse(res.text) as QueryBody;
    } catch {
      body = undefined;
    }
    if (res.status < 200 || res.status > 299) {
      const detail = body?.error ?? res.text.trim().slice(0, 200);
      throw new Error(`the PromQL service ${where} answered HTTP ${res.status} ${res.statusText} to ${shown}${detail ? `: ${detail}` : ''}`);
    }
    if (!body || typeof body !== 'object') throw new Error(`the PromQL service ${where} answered ${shown} with something other than JSON`);
    if (body.status !== 'success') throw new Error(`the PromQL service ${where} could not evaluate ${shown}: ${body.error ?? body.status}`);
    const type = body.data?.resultType;
    if (type !== 'vector') throw new Error(`invalid PromQL result for ${shown}: a ${type ?? 'missing result'}, not a vector`);
    const samples = Array.isArray(body.data?.result) ? (body.data.result as { value?: [number, string] }[]) : [];
    if (samples.length !== 1) throw new Error(`invalid PromQL result for ${shown}: ${samples.length} samples, must be exactly one`);
    const value = samples[0]?.value?.[1];
    if (value === '0') return false;
    if (value === '1') return true;
    throw new Error(`invalid PromQL result for ${shown}: ${value}, must be 0 or 1`);
  };
}

function get(
  url: URL,
  address: string,
  headers: Record<string, string>,
  tls: { ca?: string; servername: string } | undefined,
  timeoutMs: number,
): Promise<{ status: number; statusText: string; text: string }> {
  return new Promise((resolve, reject) => {
    const options = { method: 'GET', host: address, port: url.port || (tls ? 443 : 80), path: `${url.pathname}${url.search}`, headers, timeout: timeoutMs };
    const onResponse = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > 16 * 1024 * 1024) res.destroy(new Error('the answer is larger than 16 MiB'));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    // servername '' for an IP address: Node refuses IP addresses as SNI names.
    const req = tls
      ? httpsRequest({ ...options, ca: tls.ca, servername: /^[\d.]+$|:/.test(tls.servername) ? '' : tls.servername, agent: false }, onResponse)
      : httpRequest({ ...options, agent: false }, onResponse);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end();
  });
}
