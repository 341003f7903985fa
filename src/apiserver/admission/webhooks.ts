// Dynamic admission, as kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook
// plugins do it: a create, update or delete that came through the API is sent, as an
// admission.k8s.io/v1 AdmissionReview, to every webhook of the stored Mutating/Validating-
// WebhookConfigurations whose rules (operations, groups, versions, resources and subresources with
// `*`, scope), namespaceSelector and objectSelector match it. Mutating webhooks run one after
// another in order (configurations by name, then their webhooks), before the kind's schema
// validation, and their JSONPatch responses change the object; validating webhooks run together
// after it, just before the object is stored. The call goes to clientConfig.url, or to the
// Service's endpoint (resolved as the aggregator does) with TLS checked for
// `<service>.<namespace>.svc` against the caBundle, within timeoutSeconds. A denial is the
// webhook's status (code at least 400) with kube's `admission webhook "<name>" denied the request:`
// message; a webhook that cannot be called fails the request with kube's 500 `failed calling
// webhook "<name>": …` under failurePolicy Fail and is passed over under Ignore. Dry runs carry
// dryRun (v1 webhooks all declare sideEffects None or NoneOnDryRun, the kind's validation makes
// sure). The webhook configurations themselves are never sent to webhooks, as in kube, so that a
// broken webhook can always be removed. Departures: matchPolicy is read as Equivalent only as far
// as this server serves one version per group; reinvocation is never done (the kind refuses
// IfNeeded).
import { randomUUID } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type * as api from '../../api/index.js';
import { storedSelectorMatches } from '../../common/label-selectors.js';
import { resolveServiceTarget, type Target } from '../aggregator/api-services.js';
import { applyJsonPatch } from '../apply/patch.js';
import type { UserInfo } from '../auth/request-attributes.js';
import { ApiError } from '../errors.js';
import { asKind } from '../kinds/strategy.js';
import { ADMISSION_GROUP } from '../kinds/webhookconfigurations.js';
import { storagePrefix, type ResourceType } from '../registry/resource-type.js';
import type { Storage } from '../storage/types.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** One request as admission sees it. */
export interface AdmissionAttributes {
  operation: Operation;
  type: ResourceType;
  subresource?: string;
  /** The kind of `object` when it is not the type's own (a write through `/scale` is a Scale). */
  kind?: { group: string; version: string; kind: string };
  namespace?: string;
  name: string;
  /** The object being written (none on delete). */
  object?: api.Unstructured;
  /** The stored object (update and delete). */
  oldObject?: api.Unstructured;
  user?: UserInfo;
  dryRun: boolean;
  /** Warnings the webhooks return, for the response's Warning headers. */
  warnings?: string[];
}

type Webhook = api.MutatingWebhook | api.ValidatingWebhook;

const MUTATING = { group: ADMISSION_GROUP, resource: 'mutatingwebhookconfigurations' };
const VALIDATING = { group: ADMISSION_GROUP, resource: 'validatingwebhookconfigurations' };
const SERVICES = { group: '', resource: 'services' };
const ENDPOINTS = { group: '', resource: 'endpoints' };
const NAMESPACES = { group: '', resource: 'namespaces' };
/** The storage key of a built-in object (registry/resource-type.ts's layout) by group, resource, namespace and name. */
const keyOf = (t: { group: string; resource: string }, namespace: string, name: string) => `${storagePrefix(t)}${namespace}/${name}`;

/** The options object kube sends with each operation (CreateOptions, UpdateOptions, DeleteOptions). */
const OPTIONS_KIND: Record<Operation, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

const matchesAny = (values: string[] | undefined, value: string) => (values ?? []).some((v) => v === '*' || v === value);

// Whether a rule's resources name `resource` (with its subresource): `*`, `*/*`, `r`, `r/*`, `*/s`, `r/s`.
function resourceMatches(patterns: string[] | undefined, resource: string, subresource: string | undefined): boolean {
  return (patterns ?? []).some((pattern) => {
    if (pattern === '*/*') return true;
    const [main, sub] = pattern.split('/');
    if (main !== '*' && main !== resource) return false;
    if (sub === undefined) return subresource === undefined;
    return sub === '*' || sub === subresource;
  });
}

/** Whether any of a webhook's rules matches the request (kube's rules.Matcher). */
export function rulesMatch(rules: api.WebhookRule[] | undefined, attrs: Pick<AdmissionAttributes, 'operation' | 'type' | 'subresource'>): boolean {
  const { type } = attrs;
  return (rules ?? []).some((rule) => {
    const scope = rule.scope ?? '*';
    if (scope === 'Cluster' && type.namespaced) return false;
    if (scope === 'Namespaced' && !type.namespaced) return false;
    return matchesAny(rule.operations, attrs.operation) && matchesAny(rule.apiGroups, type.group) && matchesAny(rule.apiVersions, type.version)
      && resourceMatches(rule.resources, type.resource, attrs.subresource);
  });
}

const labelsOf = (o: api.KubeObject | undefined): Record<string, string> => (o?.metadata?.labels ?? {}) as Record<string, string>;

export class WebhookAdmission {
  constructor(private readonly storage: Storage) {}

  private configurations<T extends { webhooks?: Webhook[] } & api.KubeObject>(which: { group: string; resource: string }): Array<{ webhook: Webhook; configuration: T }> {
    const items = this.storage.list(storagePrefix(which)).items.map((i) => asKind<T>(i.object));
    items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    return items.flatMap((configuration) => (configuration.webhooks ?? []).map((webhook) => ({ webhook, configuration })));
  }

  /**
   * Whether any webhook of that kind is configured for writes of `type` at all: when none is (the
   * usual case), a write builds no admission attributes.
   */
  configured(which: 'mutating' | 'validating', type: ResourceType): boolean {
    return !this.exempt(type) && this.storage.count(storagePrefix(which === 'mutating' ? MUTATING : VALIDATING)) > 0;
  }

  /** Whether admission applies at all: never to the webhook configurations themselves. */
  private exempt(type: ResourceType): boolean {
    return type.builtin === true && type.group === ADMISSION_GROUP;
  }

  /** The webhooks of one kind of configuration that match the request. */
  private matching(which: { group: string; resource: string }, attrs: AdmissionAttributes): Webhook[] {
    if (this.exempt(attrs.type)) return [];
    return this.configurations(which).map((c) => c.webhook).filter((w) => this.matches(w, attrs));
  }

  private matches(w: Webhook, attrs: AdmissionAttributes): boolean {
    if (!rulesMatch(w.rules, attrs)) return false;
    return this.objectMatches(w, attrs) && this.namespaceMatches(w, attrs);
  }

  /** kube's object matcher: an empty selector matches; else the new or the old object must (an absent one never does). */
  private objectMatches(w: Webhook, attrs: AdmissionAttributes): boolean {
    const selector = w.objectSelector;
    if (!selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)) return true;
    return [attrs.object, attrs.oldObject].some((o) => o !== undefined && storedSelectorMatches(selector, labelsOf(o)));
  }

  /** kube's namespace matcher: a Namespace is judged by its own labels, a cluster-scoped object always passes. */
  private namespaceMatches(w: Webhook, attrs: AdmissionAttributes): boolean {
    const selector = w.namespaceSelector;
    if (!selector || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)) return true;
    const isNamespace = attrs.type.builtin && attrs.type.group === '' && attrs.type.resource === 'namespaces';
    if (isNamespace) return storedSelectorMatches(selector, labelsOf(attrs.object ?? attrs.oldObject));
    if (!attrs.type.namespaced) return true;
    const ns = this.storage.get(keyOf(NAMESPACES, '', attrs.namespace ?? ''));
    return storedSelectorMatches(selector, labelsOf(ns?.object));
  }

  /**
   * Runs the matching mutating webhooks in order on `attrs.object`, returning the object as they
   * left it, or undefined when none patched it. On delete there is nothing to patch.
   */
  async mutate(attrs: AdmissionAttributes): Promise<api.Unstructured | undefined> {
    let object = attrs.object;
    let patched = false;
    for (const webhook of this.matching(MUTATING, attrs)) {
      const response = await this.call(webhook, { ...attrs, object });
      if (!response) continue;
      if (response.patch && object) {
        if (response.patchType !== 'JSONPatch') throw callFailed(webhook, `unsupported patch type "${String(response.patchType)}"`);
        let operations: unknown;
        try {
          operations = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
          object = applyJsonPatch(object, operations);
          patched = true;
        } catch (e) {
          throw callFailed(webhook, `the patch could not be applied: ${(e as Error).message}`);
        }
      }
    }
    return patched ? object : undefined;
  }

  /** Runs the matching validating webhooks together; the first denial or failure (in order) is thrown. */
  async validate(attrs: AdmissionAttributes): Promise<void> {
    const webhooks = this.matching(VALIDATING, attrs);
    if (webhooks.length === 0) return;
    const outcomes = await Promise.allSettled(webhooks.map((w) => this.call(w, attrs)));
    for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  }

  /**
   * One call: the AdmissionReview answered, or undefined when it failed under failurePolicy
   * Ignore. A denial throws the webhook's status; a failure under Fail throws kube's 500.
   */
  private async call(webhook: Webhook, attrs: AdmissionAttributes): Promise<api.AdmissionResponse | undefined> {
    const uid = randomUUID();
    const review: api.AdmissionReview = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: this.request(uid, attrs) };
    let response: api.AdmissionResponse;
    try {
      response = await this.post(webhook, review, uid);
    } catch (e) {
      if (webhook.failurePolicy === 'Ignore') {
        attrs.warnings?.push(`failed calling webhook "${webhook.name}" (ignored, failurePolicy Ignore): ${(e as Error).message}`);
        return undefined;
      }
      throw callFailed(webhook, (e as Error).message);
    }
    attrs.warnings?.push(...(response.warnings ?? []).map(String));
    if (!response.allowed) throw denied(webhook.name, response.status);
    return response;
  }

  private request(uid: string, attrs: AdmissionAttributes): api.AdmissionRequest {
    const { type } = attrs;
    const kind = attrs.kind ?? { group: type.group, version: type.version, kind: type.kind };
    const resource = { group: type.group, version: type.version, resource: type.resource };
    return {
      uid, kind, resource, requestKind: kind, requestResource: resource,
      ...(attrs.subresource ? { subResource: attrs.subresource, requestSubResource: attrs.subresource } : {}),
      name: attrs.name,
      ...(type.namespaced && attrs.namespace ? { namespace: attrs.namespace } : {}),
      operation: attrs.operation,
      userInfo: attrs.user ? { username: attrs.user.name, groups: attrs.user.groups, ...(attrs.user.uid ? { uid: attrs.user.uid } : {}) } : {},
      object: attrs.operation === 'DELETE' ? null : attrs.object,
      oldObject: attrs.oldObject ?? null,
      dryRun: attrs.dryRun,
      options: { kind: OPTIONS_KIND[attrs.operation], apiVersion: 'meta.k8s.io/v1', ...(attrs.dryRun ? { dryRun: ['All'] } : {}) },
    };
  }

  /** Where a webhook is called: its URL, or its Service's endpoint; and the URL kube's errors name. */
  private target(webhook: Webhook): { target: Target; path: string; shown: string } {
    const config = webhook.clientConfig;
    const timeout = `timeout=${webhook.timeoutSeconds ?? 10}s`;
    if (config.url) {
      const url = new URL(config.url);
      const path = `${url.pathname}${url.search ? `${url.search}&` : '?'}${timeout}`;
      return { target: { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 443), serverName: url.hostname }, path, shown: `${url.origin}${path}` };
    }
    const ref = config.service!;
    const read = <T extends api.KubeObject>(key: string) => {
      const item = this.storage.get(key);
      return item ? asKind<T>(item.object) : undefined;
    };
    const path = `${ref.path ?? '/'}?${timeout}`;
    const shown = `https://${ref.name}.${ref.namespace}.svc:${ref.port ?? 443}${path}`;
    let target: Target;
    try {
      target = resolveServiceTarget({ namespace: ref.namespace, name: ref.name, port: ref.port }, read<api.Service>(keyOf(SERVICES, ref.namespace, ref.name)), read<api.Endpoints>(keyOf(ENDPOINTS, ref.namespace, ref.name)));
    } catch (e) {
      throw new Error(`failed to call webhook: Post "${shown}": ${(e as Error).message}`);
    }
    return { target, path, shown };
  }

  private post(webhook: Webhook, review: api.AdmissionReview, uid: string): Promise<api.AdmissionResponse> {
    const { target, path, shown } = this.target(webhook);
    const body = JSON.stringify(review);
    const ca = webhook.clientConfig.caBundle ? Buffer.from(webhook.clientConfig.caBundle, 'base64').toString('utf8') : undefined;
    const timeoutMs = (webhook.timeoutSeconds ?? 10) * 1000;
    const failed = (detail: string) => new Error(`failed to call webhook: Post "${shown}": ${detail}`);
    return new Promise((resolve, reject) => {
      const req = httpsRequest({
        // A URL's IP address is checked against the certificate's IP addresses (Node does so when no server name is given).
        host: target.host, port: target.port, method: 'POST', path, servername: isIP(target.serverName) ? undefined : target.serverName,
        ca, agent: false, headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(body) },
      }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          clearTimeout(timer);
          if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
            return reject(new Error(`failed to call webhook: the server responded with the status code ${res.statusCode} but did not return more information`));
          }
          let answer: Partial<api.AdmissionReview>;
          try {
            answer = JSON.parse(text) as Partial<api.AdmissionReview>;
          } catch (e) {
            return reject(new Error(`received invalid webhook response: ${(e as Error).message}`));
          }
          const response = answer?.response;
          if (!response || typeof response !== 'object') return reject(new Error('webhook response was absent'));
          if (response.uid !== uid) return reject(new Error(`expected response.uid="${uid}", got "${String(response.uid)}"`));
          resolve(response);
        });
        res.on('error', (e) => reject(failed(e.message)));
      });
      const timer = setTimeout(() => {
        req.destroy();
        reject(failed('context deadline exceeded'));
      }, timeoutMs);
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(failed(tlsProblem(e, ca !== undefined, target.serverName) ?? e.message));
      });
      req.end(body);
    });
  }
}

/** Node's codes for a serving certificate whose chain does not lead to a trusted CA. */
const UNTRUSTED_CHAIN = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_SIGNATURE_FAILURE', 'CERT_UNTRUSTED', 'CERT_REJECTED',
]);

/**
 * A TLS verification failure said as kube says it (`tls: failed to verify certificate: …`) plus
 * what it means for the webhook: which trust did not verify the serving certificate — the
 * caBundle, or the system's roots when the webhook has none (as when the service CA has not
 * injected it yet). Undefined for any other error.
 */
function tlsProblem(e: Error & { code?: string }, hasCaBundle: boolean, serverName: string): string | undefined {
  const code = e.code ?? '';
  const failed = `tls: failed to verify certificate: ${e.message}`;
  if (UNTRUSTED_CHAIN.has(code)) {
    return hasCaBundle
      ? `${failed} (the webhook's clientConfig.caBundle did not verify the serving certificate: the server's certificate is not signed by a CA in the bundle)`
      : `${failed} (the webhook has no clientConfig.caBundle, and the system's trust roots did not verify the serving certificate)`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `${failed} (the serving certificate is not for ${serverName})`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `${failed} (the serving certificate is outside its validity)`;
  return undefined;
}

/** kube's error for a webhook that could not be called (apierrors.NewInternalError). */
function callFailed(webhook: Webhook, message: string): ApiError {
  const detail = `failed calling webhook "${webhook.name}": ${message}`;
  return new ApiError(500, 'InternalError', `Internal error occurred: ${detail}`, { causes: [{ message: detail }] });
}

/** kube's webhookerrors.ToStatusErr: the webhook's status, at least a 400, with the message prefixed. */
function denied(name: string, status: api.AdmissionResponse['status']): ApiError {
  const by = `admission webhook "${name}" denied the request`;
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400;
  const message = status?.message ? `${by}: ${status.message}` : status?.reason ? `${by}: ${status.reason}` : `${by} without explanation`;
  const details = status?.details && typeof status.details === 'object' ? status.details as ConstructorParameters<typeof ApiError>[3] : undefined;
  return new ApiError(code, status?.reason ?? '', message, details);
}
