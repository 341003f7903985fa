// The service CA's controllers, as OpenShift's service-ca operator runs them (run here by the
// controller manager, `--controllers service-ca`):
//   signing CA        keeps Secret openshift-service-ca/signing-key (created once, kept) and
//                     publishes its certificate as ConfigMaps openshift-service-ca/signing-cabundle
//                     and openshift-config-managed/service-ca (key ca-bundle.crt);
//   serving certs     a `kubernetes.io/tls` Secret for every Service annotated
//                     service.beta.openshift.io/serving-cert-secret-name (rules in serving-cert.ts),
//                     issued again when deleted, edited, near expiry or signed by another CA;
//   CA bundle         key service-ca.crt in every ConfigMap annotated
//                     service.beta.openshift.io/inject-cabundle: "true", and clientConfig.caBundle
//                     of every webhook of a Mutating/ValidatingWebhookConfiguration so annotated
//                     (as the operator's cabundleinjector does), so that the API server trusts
//                     webhook servers whose serving certificate the service CA signed.
// The two last wait (requeue) until the CA exists; a new CA re-enqueues everything it signs.
import type * as api from '../../api/index.js';
import { Controller, type Informer, type KubeClient, TerminalError, applyObject, isAlreadyExists, isNotFound, keyOf } from '../../kube/index.js';
import type { Clock } from '../../kube/clock.js';
import { resources as R } from '../../kube/resources.js';
import {
  ANNOTATIONS,
  INJECTION_KEY,
  PUBLISHED_CABUNDLE,
  SERVICE_CA_NAMESPACE,
  SIGNING_CABUNDLE,
  SIGNING_SECRET,
  type ServiceCa,
  caFromSigningSecret,
  createServiceCa,
  judgeServingSecret,
  originatingService,
  requestedSecretName,
  servingSecret,
  signingSecret,
  wantsCaBundle,
} from './serving-cert.js';

export interface ServiceCaContext {
  client: KubeClient;
  informers: {
    services: Informer<api.Service>; secrets: Informer<api.Secret>; configMaps: Informer<api.ConfigMap>;
    /** Given: their caBundle is injected too. */
    mutatingWebhookConfigurations?: Informer<api.MutatingWebhookConfiguration>;
    validatingWebhookConfigurations?: Informer<api.ValidatingWebhookConfiguration>;
  };
  clock: Clock;
}

const SIGNING_KEY = `${SERVICE_CA_NAMESPACE}/${SIGNING_SECRET}`;
/** How long a CA-less sync waits before looking again. */
const WAIT_FOR_CA_MS = 1000;
/** The longest requeue (timers cannot wait two years; a later sync computes the rest). */
const MAX_REQUEUE_MS = 24 * 60 * 60 * 1000;

/** The current CA from the signing Secret in the cache, parsed once per resourceVersion. */
class CaSource {
  private parsed?: { version: string; ca: ServiceCa };
  constructor(private readonly secrets: Informer<api.Secret>) {}
  current(): ServiceCa | undefined {
    const secret = this.secrets.get(SIGNING_SECRET, SERVICE_CA_NAMESPACE);
    if (!secret) return undefined;
    const version = secret.metadata.resourceVersion ?? '';
    if (this.parsed?.version !== version) {
      try {
        this.parsed = { version, ca: caFromSigningSecret(secret) };
      } catch {
        return undefined;
      }
    }
    return this.parsed.ca;
  }
}

const isSigningSecret = (s: api.Secret) => s.metadata.namespace === SERVICE_CA_NAMESPACE && s.metadata.name === SIGNING_SECRET;

export function serviceCaControllers(ctx: ServiceCaContext): Controller[] {
  const { services, secrets, configMaps } = ctx.informers;
  const ca = new CaSource(secrets);
  const now = () => new Date(ctx.clock.now());

  // The signing CA and its published bundles.
  const signing = new Controller({ name: 'service-ca-signer', clock: ctx.clock, keys: [SIGNING_KEY], sync: syncSigning });
  signing.watch(secrets, (s) => (isSigningSecret(s) ? SIGNING_KEY : undefined));
  signing.watch(configMaps, (cm) => (cm.metadata.namespace === SERVICE_CA_NAMESPACE && cm.metadata.name === SIGNING_CABUNDLE) || (cm.metadata.namespace === PUBLISHED_CABUNDLE.namespace && cm.metadata.name === PUBLISHED_CABUNDLE.name) ? SIGNING_KEY : undefined);

  async function syncSigning(): Promise<void> {
    let current = ca.current();
    if (!current) {
      const live = await ctx.client.read(R.secrets, SIGNING_SECRET, SERVICE_CA_NAMESPACE);
      if (live) current = caFromSigningSecret(live); // a bad Secret is an error to fix, not to overwrite
      else {
        await ensureNamespace(ctx.client, SERVICE_CA_NAMESPACE);
        const created = await createServiceCa(now());
        await ctx.client.create(R.secrets, signingSecret(created));
        current = created;
      }
    }
    const bundle = current.pair.certPem;
    await applyObject(ctx.client, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: SIGNING_CABUNDLE, namespace: SERVICE_CA_NAMESPACE }, data: { 'ca-bundle.crt': bundle } }, R.configMaps);
    await ensureNamespace(ctx.client, PUBLISHED_CABUNDLE.namespace);
    await applyObject(ctx.client, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: PUBLISHED_CABUNDLE.name, namespace: PUBLISHED_CABUNDLE.namespace }, data: { [PUBLISHED_CABUNDLE.key]: bundle } }, R.configMaps);
  }

  // Serving certificates, keyed by Service.
  const serving = new Controller({ name: 'service-serving-cert', clock: ctx.clock, workers: 2, sync: syncService });
  serving.watch(services);
  serving.watch(secrets, (s) => {
    if (isSigningSecret(s)) return services.list().filter((svc) => requestedSecretName(svc)).map(keyOf);
    const service = originatingService(s);
    return service ? `${s.metadata.namespace}/${service}` : undefined;
  });

  async function syncService(key: string): Promise<{ requeueAfterMs: number } | void> {
    const [namespace, name] = key.split('/');
    const service = services.get(name, namespace);
    const secretName = service && requestedSecretName(service);
    if (!service || !secretName || service.metadata.deletionTimestamp) return;
    const signer = ca.current();
    if (!signer) return { requeueAfterMs: WAIT_FOR_CA_MS };
    const secret = secrets.get(secretName, namespace);
    const verdict = judgeServingSecret(service, secret, signer, now());
    if (verdict.action === 'conflict') {
      // Written once per new error (the write is itself an event on the Service).
      const written = service.metadata.annotations ?? {};
      if (written[ANNOTATIONS.error] !== verdict.message) await annotateService(service, { [ANNOTATIONS.error]: verdict.message, [ANNOTATIONS.errorNum]: String((Number(written[ANNOTATIONS.errorNum]) || 0) + 1) });
      throw new TerminalError(verdict.message);
    }
    if (verdict.action === 'issue') {
      const desired = await servingSecret(service, secretName, signer, now());
      if (!secret) {
        try {
          await ctx.client.create(R.secrets, desired);
        } catch (e) {
          if (!isAlreadyExists(e)) throw e;
          throw new Error(`Secret ${namespace}/${secretName} exists already but is not in the cache yet; trying again`);
        }
      } else await ctx.client.update(R.secrets, { ...desired, metadata: { ...secret.metadata, annotations: { ...secret.metadata.annotations, ...desired.metadata.annotations }, ownerReferences: desired.metadata.ownerReferences } });
    }
    await annotateService(service, { [ANNOTATIONS.signedBy]: signer.commonName, [ANNOTATIONS.alphaSignedBy]: signer.commonName, [ANNOTATIONS.error]: null, [ANNOTATIONS.errorNum]: null });
    const renewIn = verdict.action === 'none' ? verdict.renewAt.getTime() - ctx.clock.now() : MAX_REQUEUE_MS;
    return { requeueAfterMs: Math.max(1000, Math.min(renewIn, MAX_REQUEUE_MS)) };
  }

  /** Merge-patches a Service's annotations (null removes one) when any differs. */
  async function annotateService(service: api.Service, annotations: Record<string, string | null>): Promise<void> {
    const current = service.metadata.annotations ?? {};
    if (Object.entries(annotations).every(([k, v]) => (v === null ? !(k in current) : current[k] === v))) return;
    try {
      await ctx.client.mergePatch(R.services, service.metadata.name ?? '', service.metadata.namespace, { metadata: { annotations } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  // The CA bundle, keyed by ConfigMap.
  const injector = new Controller({ name: 'service-ca-cabundle-injector', clock: ctx.clock, sync: syncConfigMap });
  injector.watch(configMaps, undefined, (_type, cm) => wantsCaBundle(cm));
  injector.watch(secrets, (s) => (isSigningSecret(s) ? configMaps.list().filter(wantsCaBundle).map(keyOf) : undefined));

  async function syncConfigMap(key: string): Promise<{ requeueAfterMs: number } | void> {
    const [namespace, name] = key.split('/');
    const configMap = configMaps.get(name, namespace);
    if (!configMap || !wantsCaBundle(configMap) || configMap.metadata.deletionTimestamp) return;
    const signer = ca.current();
    if (!signer) return { requeueAfterMs: WAIT_FOR_CA_MS };
    if (configMap.data?.[INJECTION_KEY] === signer.pair.certPem) return;
    try {
      await ctx.client.mergePatch(R.configMaps, name, namespace, { data: { [INJECTION_KEY]: signer.pair.certPem } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  const webhookInjectors = ([
    ['mutating', ctx.informers.mutatingWebhookConfigurations, R.mutatingWebhookConfigurations],
    ['validating', ctx.informers.validatingWebhookConfigurations, R.validatingWebhookConfigurations],
  ] as const).flatMap(([which, informer, resource]) => (informer ? [webhookInjector(which, informer, resource)] : []));

  /** The CA bundle in every webhook of the annotated configurations of one kind. */
  function webhookInjector(which: string, informer: Informer<WebhookConfiguration>, resource: typeof R.mutatingWebhookConfigurations | typeof R.validatingWebhookConfigurations): Controller {
    const controller = new Controller({ name: `service-ca-${which}-webhook-injector`, clock: ctx.clock, sync });
    controller.watch(informer, undefined, (_type, o) => wantsCaBundle(o));
    controller.watch(secrets, (s) => (isSigningSecret(s) ? informer.list().filter(wantsCaBundle).map(keyOf) : undefined));
    async function sync(key: string): Promise<{ requeueAfterMs: number } | void> {
      const name = key.replace(/^\//, '');
      const configuration = informer.get(name);
      if (!configuration || !wantsCaBundle(configuration) || configuration.metadata.deletionTimestamp) return;
      const signer = ca.current();
      if (!signer) return { requeueAfterMs: WAIT_FOR_CA_MS };
      const bundle = Buffer.from(signer.pair.certPem).toString('base64');
      const webhooks = configuration.webhooks ?? [];
      if (webhooks.every((w) => w.clientConfig?.caBundle === bundle)) return;
      // The whole object with its resourceVersion: a configuration changed meanwhile is a conflict, synced again.
      const next = { ...configuration, webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: bundle } })) };
      try {
        await ctx.client.update(resource as typeof R.validatingWebhookConfigurations, next as api.ValidatingWebhookConfiguration);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    return controller;
  }

  return [signing, serving, injector, ...webhookInjectors];
}

type WebhookConfiguration = api.MutatingWebhookConfiguration | api.ValidatingWebhookConfiguration;

async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  if (await client.read(R.namespaces, name)) return;
  await client.create(R.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }).catch((e) => {
    if (!isAlreadyExists(e)) throw e;
  });
}
