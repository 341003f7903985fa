// kube-aggregator's availability controller: every APIService's Available condition, checked
// again as soon as an APIService, or a Service or Endpoints one names, changes, and every few
// seconds for what changes without an object (a server that starts or stops answering). A local
// one (no service) is Available (Local); a service-backed one is when its Service resolves to an address (else ServiceNotFound / MissingEndpoints) and its
// discovery document (`/apis/<group>/<version>`) answers 2xx over the proxy's TLS (else
// FailedDiscoveryCheck, with what failed). `kubectl get apiservices` shows it. The discovery
// document each server answered is kept for the aggregated discovery of `/apis`, as
// kube-aggregator's discovery manager keeps it.
import { request as httpsRequest } from 'node:https';
import type * as api from '../../api/index.js';
import type { KeyPair } from '../../common/pki.js';
import type { Logger } from '../../common/log.js';
import { rfc3339 } from '../../common/time.js';
import { asKind } from '../kinds/strategy.js';
import type { Registry } from '../registry/registry.js';
import type { Resources } from '../registry/resources.js';
import { storageKey, storagePrefix } from '../registry/resource-type.js';
import { jsonEqual } from '../../common/json.js';
import type { Storage } from '../storage/types.js';
import { resolveTarget, type Target } from './api-services.js';
import { storedApiServices } from './proxy.js';

const DOCUMENT_LIMIT = 1024 * 1024;

export type Availability = { status: 'True' | 'False'; reason: string; message: string };

/** The condition for what was found. Pure. */
export function availabilityOf(apiService: api.APIService, target: Target | Error | undefined, probe: 'ok' | string | undefined): Availability {
  if (!apiService.spec?.service) return { status: 'True', reason: 'Local', message: 'Local APIServices are always available' };
  if (target instanceof Error || target === undefined) {
    const missingService = target instanceof Error && /not present|has no port/.test(target.message);
    return { status: 'False', reason: missingService ? 'ServiceNotFound' : 'MissingEndpoints', message: target?.message ?? 'no target' };
  }
  if (probe === 'ok') return { status: 'True', reason: 'Passed', message: 'all checks passed' };
  return { status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from https://${target.host}:${target.port}/apis/${apiService.spec.group}/${apiService.spec.version}: ${probe ?? 'no answer'}` };
}

/** GET of the group-version's discovery document as the proxy would send it: 'ok' with the document, or what failed. */
function probe(target: Target, apiService: api.APIService, proxyClient: KeyPair, timeoutMs: number): Promise<{ outcome: string; document?: unknown }> {
  const caBundle = apiService.spec?.caBundle ? Buffer.from(apiService.spec.caBundle, 'base64').toString('utf8') : undefined;
  return new Promise((resolve) => {
    const req = httpsRequest({
      host: target.host, port: target.port, method: 'GET', path: `/apis/${apiService.spec?.group}/${apiService.spec?.version}`, agent: false, timeout: timeoutMs,
      servername: target.serverName, ca: caBundle, rejectUnauthorized: !apiService.spec?.insecureSkipTLSVerify, cert: proxyClient.certPem, key: proxyClient.keyPem,
      headers: { 'x-remote-user': 'system:kube-aggregator', 'x-remote-group': ['system:masters', 'system:authenticated'], accept: 'application/json' },
    }, (res) => {
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) {
        res.resume();
        resolve({ outcome: `bad status from ${target.host}:${target.port}: ${code}` });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // A discovery document is a few KiB; one past a MiB is not kept.
        if (size <= DOCUMENT_LIMIT) chunks.push(chunk);
      });
      res.on('end', () => {
        let document: unknown;
        try {
          document = size <= DOCUMENT_LIMIT ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
        } catch {
          document = undefined;
        }
        resolve({ outcome: 'ok', document });
      });
      res.on('error', (e) => resolve({ outcome: e.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => resolve({ outcome: e.message }));
    req.end();
  });
}

export function enableApiServiceAvailability(
  storage: Storage, registry: Registry, resources: Resources, proxyClient: KeyPair, log: Logger, documents: Map<string, unknown> = new Map(), intervalMs = 5000,
): { stop(): void } {
  const type = registry.lookup('apiregistration.k8s.io', 'v1', 'apiservices')!;
  const serviceType = registry.lookup('', 'v1', 'services')!;
  const endpointsType = registry.lookup('', 'v1', 'endpoints')!;
  const read = <T extends api.KubeObject>(key: string) => {
    const item = storage.get(key);
    return item ? asKind<T>(item.object) : undefined;
  };
  // `<namespace>/<name>` of every Service an APIService names: their changes (and their Endpoints') are acted on.
  const servicesNamed = (apiServices: api.APIService[]) => new Set(apiServices.flatMap((a) => (a.spec?.service ? [`${a.spec.service.namespace}/${a.spec.service.name}`] : [])));
  let namedServices = servicesNamed(storedApiServices(storage));
  let running = false;
  // A change during a check: checked again once it ends.
  let again = false;
  const check = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const apiServices = storedApiServices(storage);
      namedServices = servicesNamed(apiServices);
      for (const name of documents.keys()) if (!apiServices.some((a) => a.metadata.name === name)) documents.delete(name);
      for (const apiService of apiServices) {
        const ref = apiService.spec?.service;
        let target: Target | Error | undefined;
        if (ref) {
          try {
            target = resolveTarget(apiService, read<api.Service>(storageKey(serviceType, ref.namespace, ref.name ?? '')), read<api.Endpoints>(storageKey(endpointsType, ref.namespace, ref.name ?? '')));
          } catch (e) {
            target = e as Error;
          }
        }
        const answer = target && !(target instanceof Error) ? await probe(target, apiService, proxyClient, Math.min(intervalMs, 5000)) : undefined;
        if (answer?.document !== undefined) documents.set(apiService.metadata.name, answer.document);
        else documents.delete(apiService.metadata.name);
        const wanted = availabilityOf(apiService, target, answer?.outcome);
        const old = apiService.status?.conditions?.find((c) => c.type === 'Available');
        if (old && old.status === wanted.status && old.reason === wanted.reason && old.message === wanted.message) continue;
        const condition = { type: 'Available', ...wanted, lastTransitionTime: old?.status === wanted.status && old.lastTransitionTime ? old.lastTransitionTime : rfc3339() };
        const conditions = [...(apiService.status?.conditions ?? []).filter((c) => c.type !== 'Available'), condition];
        await resources.update(type, undefined, apiService.metadata.name, { ...apiService, status: { conditions } }, { subresource: 'status' }).catch((e: Error) => {
          // Changed or deleted meanwhile: the next round sees it afresh.
          if (!['Conflict', 'NotFound'].includes((e as { reason?: string }).reason ?? '')) throw e;
        });
      }
    } catch (e) {
      log.warn({ err: (e as Error).message }, 'APIService availability check failed');
    } finally {
      running = false;
      if (again) {
        again = false;
        void check();
      }
    }
  };
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  // A burst of changes (an install applying many objects) is one check.
  let queued: NodeJS.Immediate | undefined;
  const soon = () => {
    queued ??= setImmediate(() => {
      queued = undefined;
      void check();
    });
  };
  const named = (key: string, prefix: string) => namedServices.has(key.slice(prefix.length));
  const from = storage.currentRevision();
  const apiServicesPrefix = storagePrefix(type);
  const servicesPrefix = storagePrefix(serviceType);
  const endpointsPrefix = storagePrefix(endpointsType);
  const watchers = [
    storage.watch(apiServicesPrefix, from, (event) => {
      // Its own status writes are not changes to act on.
      if (event.type !== 'MODIFIED' || !jsonEqual(event.object.spec, event.previous?.spec)) soon();
    }),
    ...[servicesPrefix, endpointsPrefix].map((prefix) => storage.watch(prefix, from, (event) => {
      if (named(event.key, prefix)) soon();
    })),
  ];
  void check();
  return {
    stop: () => {
      clearInterval(timer);
      if (queued) clearImmediate(queued);
      for (const w of watchers) w.stop();
    },
  };
}
