// The cloud-credential controller, as OpenShift's cloud-credential-operator works in mint mode:
// for every CredentialsRequest (cloudcredential.openshift.io/v1) in
// openshift-cloud-credential-operator, it asks the local cloud — with the root credential, which
// only it and the installer hold — for an identity named after the request holding exactly the
// actions spec.providerSpec.actions lists, and writes that identity's credential into the Secret
// spec.secretRef names (key `credential`), in the component's own namespace. The component mounts
// the Secret and calls the cloud with it (--cloud-credentials-file).
//
// Level-triggered: the identity's actions follow the spec; a Secret deleted, edited or holding a
// key the cloud no longer knows gets a new credential (the old one stops working); a request
// deleted takes its identity and Secret with it (finalizer cloudcredential.openshift.io/deprovision).
// Problems are status conditions, as the operator reports them: CredentialsProvisionFailure
// (unknown or root-only actions, a Secret that is not the request's), MissingTargetNamespace,
// Ignored (a request outside the operator's namespace).
import type * as api from '../api/index.js';
import { CREDENTIAL_KEY, type CloudClient } from '../cloud/client.js';
import { CloudError } from '../cloud/errors.js';
import type { Clock } from '../kube/clock.js';
import { Controller, type Informer, type KubeClient, type Manager, isNotFound, keyOf } from '../kube/index.js';
import { resources as R } from '../kube/resources.js';
import { jsonEqual } from '../common/json.js';
import { rfc3339 } from '../common/time.js';
import { judgeActions } from './rules.js';

export const CREDENTIALS_NAMESPACE = 'openshift-cloud-credential-operator';
export const DEPROVISION_FINALIZER = 'cloudcredential.openshift.io/deprovision';
/** On the Secret: the request it was written for (`namespace/name`), as the operator annotates it. */
export const REQUEST_ANNOTATION = 'cloudcredential.openshift.io/credentials-request';
/** How long a request waits for its target namespace before looking again. */
const NAMESPACE_WAIT_MS = 5000;

type Condition = NonNullable<api.CredentialsRequestStatus['conditions']>[number];

export interface CloudCredentialContext {
  client: KubeClient;
  informers: { requests: Informer<api.CredentialsRequest>; secrets: Informer<api.Secret> };
  /** The cloud, with the root credential (credentials:manage). */
  cloud: CloudClient;
  clock: Clock;
}

/** The cloud identity a request's credential belongs to: the request's name. */
export const identityOf = (request: api.CredentialsRequest) => request.metadata.name ?? '';

const keyIdOf = (credential: string) => credential.split('.')[0];

export function cloudCredentialController(ctx: CloudCredentialContext): Controller {
  const { requests, secrets } = ctx.informers;
  const controller = new Controller({ name: 'cloud-credential', clock: ctx.clock, sync });
  controller.watch(requests);
  controller.watch(secrets, (s) => s.metadata.annotations?.[REQUEST_ANNOTATION] ?? undefined);

  async function sync(key: string): Promise<{ requeueAfterMs: number } | void> {
    const [namespace, name] = key.split('/');
    const request = requests.get(name, namespace);
    if (!request) return;
    if (namespace !== CREDENTIALS_NAMESPACE) {
      await setStatus(request, { provisioned: false }, condition('Ignored', 'True', 'OutsideOperatorNamespace', `CredentialsRequests are honoured in ${CREDENTIALS_NAMESPACE} only`));
      return;
    }
    if (request.metadata.deletionTimestamp) return deprovision(request);
    const finalizers = request.metadata.finalizers ?? [];
    if (!finalizers.includes(DEPROVISION_FINALIZER)) {
      // The update is an event: the next sync provisions.
      await ctx.client.mergePatch(R.credentialsRequests, name, namespace, { metadata: { finalizers: [...finalizers, DEPROVISION_FINALIZER], resourceVersion: request.metadata.resourceVersion } });
      return;
    }
    const spec = request.spec;
    const verdict = judgeActions(spec?.providerSpec?.actions);
    if (!spec || verdict.problem) {
      await setStatus(request, { provisioned: false }, condition('CredentialsProvisionFailure', 'True', 'InvalidProviderSpec', verdict.problem ?? 'spec is missing'));
      return;
    }
    const target = spec.secretRef;
    if (!(await ctx.client.read(R.namespaces, target.namespace))) {
      await setStatus(request, { provisioned: false }, condition('MissingTargetNamespace', 'True', 'NamespaceMissing', `target namespace ${target.namespace} does not exist`));
      return { requeueAfterMs: NAMESPACE_WAIT_MS };
    }
    const secret = await ctx.client.read(R.secrets, target.name, target.namespace);
    const owner = secret?.metadata.annotations?.[REQUEST_ANNOTATION];
    if (secret && owner !== key) {
      await setStatus(request, { provisioned: false }, condition('CredentialsProvisionFailure', 'True', 'SecretConflict', `Secret ${target.namespace}/${target.name} exists and was not written for this request (annotation ${REQUEST_ANNOTATION}: ${owner ?? 'none'}); delete it or name another Secret`));
      return;
    }

    const identity = identityOf(request);
    const put = await ctx.cloud.putIdentity(identity, verdict.actions);
    let credential = put.credential;
    const current = secret?.data?.[CREDENTIAL_KEY] ? Buffer.from(secret.data[CREDENTIAL_KEY], 'base64').toString('utf8').trim() : undefined;
    // The Secret holds the identity's current key and the cloud takes it: nothing to write. Else
    // (deleted, edited, or a key since rotated) a new credential, which revokes whatever was out.
    if (!credential && !(current && keyIdOf(current) === put.identity.keyId && (await works(current)))) credential = (await ctx.cloud.rotateCredential(identity)).credential;
    if (credential) await writeSecret(request, secret, credential);
    await setStatus(request, {
      provisioned: true,
      lastSyncGeneration: request.metadata.generation ?? 0,
      providerStatus: { identity, keyId: credential ? keyIdOf(credential) : put.identity.keyId },
    }, condition('CredentialsProvisionFailure', 'False', 'CredentialsProvisioned', `identity ${identity} may: ${verdict.actions.join(', ')}`), condition('MissingTargetNamespace', 'False', 'NamespaceExists', ''));
  }

  /** Whether the cloud knows the credential (a 401 says it does not; anything else is a failure to retry). */
  async function works(credential: string): Promise<boolean> {
    try {
      await ctx.cloud.as(credential).identity();
      return true;
    } catch (e) {
      if (e instanceof CloudError && e.status === 401) return false;
      throw e;
    }
  }

  async function writeSecret(request: api.CredentialsRequest, live: api.Secret | undefined, credential: string): Promise<void> {
    const ref = request.spec!.secretRef;
    const desired: api.Secret = {
      apiVersion: 'v1', kind: 'Secret',
      metadata: { name: ref.name, namespace: ref.namespace, annotations: { [REQUEST_ANNOTATION]: keyOf(request) }, labels: { 'cloudcredential.openshift.io/credentials-request': 'true' } },
      type: 'Opaque',
      data: { [CREDENTIAL_KEY]: Buffer.from(credential).toString('base64'), identity: Buffer.from(identityOf(request)).toString('base64') },
    };
    if (!live) await ctx.client.create(R.secrets, desired);
    else await ctx.client.update(R.secrets, { ...desired, metadata: { ...live.metadata, ...desired.metadata, resourceVersion: live.metadata.resourceVersion } });
  }

  async function deprovision(request: api.CredentialsRequest): Promise<void> {
    const finalizers = request.metadata.finalizers ?? [];
    if (!finalizers.includes(DEPROVISION_FINALIZER)) return;
    try {
      await ctx.cloud.deleteIdentity(identityOf(request));
    } catch (e) {
      if (!(e instanceof CloudError && e.status === 404)) throw e;
    }
    const ref = request.spec?.secretRef;
    const secret = ref ? await ctx.client.read(R.secrets, ref.name, ref.namespace) : undefined;
    if (ref && secret?.metadata.annotations?.[REQUEST_ANNOTATION] === keyOf(request)) await ctx.client.delete(R.secrets, ref.name, ref.namespace);
    try {
      await ctx.client.mergePatch(R.credentialsRequests, request.metadata.name ?? '', request.metadata.namespace, { metadata: { finalizers: finalizers.filter((f) => f !== DEPROVISION_FINALIZER), resourceVersion: request.metadata.resourceVersion } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  function condition(type: string, status: 'True' | 'False', reason: string, message: string): Condition {
    return { type, status, reason, message };
  }

  /** Writes the status when it differs (conditions keep their transition time while their status holds). */
  async function setStatus(request: api.CredentialsRequest, fields: Omit<api.CredentialsRequestStatus, 'conditions'>, ...conditions: Condition[]): Promise<void> {
    const old = request.status ?? {};
    const now = rfc3339(new Date(ctx.clock.now()));
    const merged = conditions.map((c) => {
      const before = old.conditions?.find((o) => o.type === c.type);
      return { ...c, lastProbeTime: now, lastTransitionTime: before && before.status === c.status ? before.lastTransitionTime : now };
    });
    const status: api.CredentialsRequestStatus = { ...fields, lastSyncTimestamp: now, conditions: merged };
    // Times aside, the same status is not written again (each write is an event that syncs again).
    const timeless = (x: api.CredentialsRequestStatus) => ({ ...x, lastSyncTimestamp: undefined, conditions: (x.conditions ?? []).map((c) => ({ ...c, lastProbeTime: undefined, lastTransitionTime: undefined })) });
    if (old.lastSyncTimestamp && jsonEqual(timeless(old), timeless(status))) return;
    await ctx.client.update(R.credentialsRequests, { ...request, status }, 'status');
  }

  return controller;
}

/** Adds the controller to a component manager (the install's control plane runs it beside the machine approver). */
export function addCloudCredentialController(manager: Manager, cloud: CloudClient): void {
  const informers = {
    requests: manager.informers.forResource(R.credentialsRequests),
    secrets: manager.informers.forResource(R.secrets),
  };
  manager.add(cloudCredentialController({ client: manager.client, informers, cloud, clock: manager.clock }));
}
