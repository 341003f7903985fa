// `pods/log`: kube-apiserver answers it by proxying to the kubelet of the pod's node,
// `https://<node address>:<kubelet port>/containerLogs/<ns>/<pod>/<container>?…`, as a client
// certificate of its own (kube-apiserver-kubelet-client), and streams the answer back — for
// `kubectl logs -f`, as long as the kubelet keeps writing. The location and the log options are
// worked out purely (podLogLocation); streamPodLogs is the thin proxy around them.
import { request as httpsRequest } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, errors } from '../errors.js';
import type { KeyPair } from '../../common/pki.js';

import type * as api from '../../api/index.js';

export const DEFAULT_KUBELET_PORT = 10250;
/** Which node address the API server dials, in order (kube's --kubelet-preferred-address-types, InternalIP first here). */
const ADDRESS_PREFERENCE = ['InternalIP', 'Hostname', 'InternalDNS', 'ExternalIP', 'ExternalDNS'];

export interface LogLocation {
  url: URL;
  container: string;
}

const BOOLEAN_OPTIONS = ['follow', 'previous', 'timestamps'];
export const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
export const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

function podLogOptionsInvalid(pod: string, field: string, message: string): ApiError {
  return errors.invalid('PodLogOptions', '', pod, [{ type: 'FieldValueInvalid', field, message }]);
}

/**
 * The container of `pod` a request names (`requested`), or its only container when it names none;
 * the 400 kube answers when it names none of several, or one the pod does not have.
 */
export function podContainer(pod: api.Pod, requested: string): string {
  const name = String(pod.metadata?.name ?? '');
  const containers: string[] = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []), ...(pod.spec?.ephemeralContainers ?? [])].map((c) => c?.name).filter((n) => typeof n === 'string');
  if (requested === '') {
    const main = (pod.spec?.containers ?? []).map((c) => c?.name);
    if (main.length !== 1) throw errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${main.join(' ')}]`);
    return main[0];
  }
  if (!containers.includes(requested)) throw errors.badRequest(`container ${requested} is not valid for pod ${name}`);
  return requested;
}

/** Where the kubelet of `pod`'s node is reached (host ready for a URL, port); the 400/404/500 kube answers when it cannot be. */
export function kubeletAddress(pod: api.Pod, node: api.Node | undefined): { host: string; port: number } {
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) throw errors.badRequest(`pod ${String(pod.metadata?.name ?? '')} does not have a host assigned`);
  if (!node) throw errors.notFound('nodes', '', nodeName);
  const addresses = node.status?.addresses ?? [];
  const address = ADDRESS_PREFERENCE.map((type) => addresses.find((a) => a?.type === type)?.address).find((a) => typeof a === 'string' && a !== '');
  if (!address) throw new ApiError(500, 'InternalError', `no preferred addresses found; known addresses: ${JSON.stringify(addresses)}`);
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port || DEFAULT_KUBELET_PORT;
  return { host: address.includes(':') ? `[${address}]` : address, port };
}

/**
 * The kubelet's refusal as the API server's error: its status and words, with the reason kube
 * gives that status (a 400 — "container … is waiting to start", "… writes no log" — is kubectl's
 * `Error from server (BadRequest)`); what is not an error status is a 500.
 */
export function kubeletRefusal(code: number, body: string, subresource: string): ApiError {
  const reasons: Record<number, string> = { 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound' };
  const status = code >= 400 ? code : 500;
  return new ApiError(status, reasons[status] ?? 'InternalError', body.trim() || `the kubelet answered ${code} for ${subresource}`);
}

/**
 * Where the logs of one container of `pod` are, and with which options, from the request's query
 * (kube's PodLogOptions: container, follow, previous, timestamps, tailLines, sinceSeconds,
 * sinceTime, limitBytes). Throws the 400/422 kube answers for a bad request.
 */
export function podLogLocation(pod: api.Pod, node: api.Node | undefined, query: Record<string, string | undefined>): LogLocation {
  const name = String(pod.metadata?.name ?? '');
  const namespace = String(pod.metadata?.namespace ?? '');
  const container = podContainer(pod, query.container ?? '');
  const { host, port } = kubeletAddress(pod, node);

  const params = new URLSearchParams();
  for (const option of BOOLEAN_OPTIONS) {
    const value = query[option];
    if (value === undefined || value === '') continue;
    if (!TRUE.has(value) && !FALSE.has(value)) throw errors.badRequest(`invalid boolean value ${JSON.stringify(value)} for query parameter "${option}"`);
    if (TRUE.has(value)) params.set(option, 'true');
  }
  const integer = (option: string, min: number, message: string) => {
    const value = query[option];
    if (value === undefined || value === '') return;
    const n = Number(value);
    if (!/^-?\d+$/.test(value)) throw errors.badRequest(`invalid value ${JSON.stringify(value)} for query parameter "${option}": must be an integer`);
    if (n < min) throw podLogOptionsInvalid(name, option, `Invalid value: ${n}: ${message}`);
    params.set(option, String(n));
  };
  integer('tailLines', 0, 'must be greater than or equal to 0');
  integer('limitBytes', 1, 'must be greater than 0');
  integer('sinceSeconds', 1, 'must be greater than 0');
  if (query.sinceTime) {
    if (params.has('sinceSeconds')) throw podLogOptionsInvalid(name, 'sinceSeconds', 'Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified');
    if (Number.isNaN(Date.parse(query.sinceTime))) throw errors.badRequest(`invalid value ${JSON.stringify(query.sinceTime)} for query parameter "sinceTime": not an RFC 3339 time`);
    params.set('sinceTime', query.sinceTime);
  }
  const path = ['containerLogs', namespace, name, container].map(encodeURIComponent).join('/');
  const url = new URL(`https://${host}:${port}/${path}`);
  url.search = params.toString();
  return { url, container };
}

export interface KubeletClient {
  /** The API server's client certificate towards kubelets (CN kube-apiserver-kubelet-client, O system:masters). */
  clientCert: KeyPair;
  /**
   * The CA kubelets' serving certificates are checked against. Unset, they are not checked — as
   * kube-apiserver does without --kubelet-certificate-authority.
   */
  kubeletCA?: string;
}

/** The TLS options of a request to a kubelet as `client` (pods/log, exec, portforward, nodes/proxy). */
export function kubeletTls(client: KubeletClient): { cert: string; key: string; ca?: string; rejectUnauthorized: boolean } {
  return { cert: client.clientCert.certPem, key: client.clientCert.keyPem, ca: client.kubeletCA, rejectUnauthorized: client.kubeletCA !== undefined };
}

/**
 * Streams the kubelet's answer for `location` to the client: once the kubelet answers 2xx,
 * `start()` hands over the raw response and the body is written through as it comes (a `follow`
 * never ends until the kubelet or the client does). A kubelet that cannot be reached or refuses
 * rejects with a Status error before anything is written, as kube's location streamer answers.
 */
export function streamPodLogs(location: LogLocation, client: KubeletClient, start: () => ServerResponse, clientGone: (listener: () => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let res: ServerResponse | undefined;
    const upstream = httpsRequest(location.url, {
      method: 'GET',
      ...kubeletTls(client),
      headers: { accept: '*/*' },
    });
    clientGone(() => upstream.destroy());
    upstream.on('error', (err) => {
      if (res) {
        res.destroy();
        resolve();
      } else reject(new ApiError(500, 'InternalError', `Get "${location.url.href}": ${err.message}`));
    });
    upstream.on('response', (answer: IncomingMessage) => {
      const code = answer.statusCode ?? 500;
      if (code < 200 || code >= 300) {
        let body = '';
        answer.setEncoding('utf8');
        answer.on('data', (chunk: string) => {
          if (body.length < 1024) body += chunk;
        });
        answer.on('end', () => reject(kubeletRefusal(code, body, 'pods/log')));
        return;
      }
      res = start();
      res.writeHead(200, { 'Content-Type': answer.headers['content-type'] ?? 'text/plain', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
      // Written through chunk by chunk, so that a follow reaches the client line by line.
      const out = res;
      answer.on('data', (chunk: Buffer) => out.write(chunk));
      answer.on('end', () => {
        out.end();
        resolve();
      });
      answer.on('error', () => {
        out.destroy();
        resolve();
      });
    });
    upstream.end();
  });
}
