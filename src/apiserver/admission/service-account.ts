// The ServiceAccount admission's token volume, as kube-apiserver's plugin adds it: a pod created
// through the API whose token is mounted (its own automountServiceAccountToken, else its service
// account's, else yes) gets a projected volume `kube-api-access-<5 characters>` — the account's
// token (expirationSeconds 3607), the cluster's CA from the namespace's `kube-root-ca.crt`
// ConfigMap, and the namespace from the downward API — mounted read-only at
// /var/run/secrets/kubernetes.io/serviceaccount in every container and init container that mounts
// nothing there already. A volume of that prefix the pod brings is used instead of a new one.
// Mirror pods (a kubelet's static pods) are left alone, as kube leaves them. What differs: a service
// account that does not exist (yet) is not refused here as kube refuses it; the token is mounted as
// if it did; and a pod its account turns off gets automountServiceAccountToken: false in its spec
// (see automounts). The node agent provides the files (cluster/node-agent/pod-worker.ts).
import { randomInt } from 'node:crypto';
import type * as api from '../../api/index.js';
import { SERVICE_ACCOUNT_DIR } from '../../kube/index.js';
import { isMirrorPod, podServiceAccount } from '../kinds/pods.js';
import { serviceaccounts } from '../kinds/serviceaccounts.js';
import { storageKey, type ResourceType } from '../registry/resource-type.js';
import type { Storage } from '../storage/types.js';
import type { AdmissionPlugin } from './plugin.js';

const VOLUME_PREFIX = 'kube-api-access-';
/** The characters of kube's generated name suffixes (no vowels, no look-alikes). */
const SUFFIX_CHARACTERS = 'bcdfghjklmnpqrstvwxz2456789';

/** The projected volume kube's ServiceAccount admission adds, under `name`. */
function tokenVolume(name: string): api.Volume {
  return {
    name,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  } as api.Volume;
}

export class ServiceAccountAdmission implements AdmissionPlugin {
  constructor(private readonly storage: Storage) {}

  mutate(type: ResourceType, object: api.Unstructured, previous: api.Unstructured | undefined): void {
    if (type.group !== '' || type.resource !== 'pods' || previous) return;
    const pod = object as api.Pod;
    if (isMirrorPod(pod)) return;
    const spec = pod.spec;
    if (typeof spec !== 'object' || spec === null || !Array.isArray(spec.containers)) return; // validation says what is wrong
    if (!this.automounts(pod, spec)) return;
    const volumes = Array.isArray(spec.volumes) ? spec.volumes : [];
    const existing = volumes.find((v) => typeof v?.name === 'string' && v.name.startsWith(VOLUME_PREFIX));
    const name = existing?.name ?? VOLUME_PREFIX + Array.from({ length: 5 }, () => SUFFIX_CHARACTERS[randomInt(SUFFIX_CHARACTERS.length)]).join('');
    let mounted = false;
    for (const container of [...(Array.isArray(spec.initContainers) ? spec.initContainers : []), ...spec.containers]) {
      if (typeof container !== 'object' || container === null) continue;
      const mounts = Array.isArray(container.volumeMounts) ? container.volumeMounts : [];
      if (mounts.some((m) => m?.mountPath === SERVICE_ACCOUNT_DIR)) continue;
      container.volumeMounts = [...mounts, { name, readOnly: true, mountPath: SERVICE_ACCOUNT_DIR }];
      mounted = true;
    }
    if (mounted && !existing) spec.volumes = [...volumes, tokenVolume(name)];
  }

  /**
   * The pod's own choice, else its service account's, else yes. A pod turned off by its account
   * alone is given `automountServiceAccountToken: false` (kube leaves it unset): the node agent, as
   * a kubelet, reads only the pod, and writes the token files for a pod that does not refuse them
   * (pods made before this admission existed have no token volume and still need them).
   */
  private automounts(pod: api.Pod, spec: api.PodSpec): boolean {
    if (typeof spec.automountServiceAccountToken === 'boolean') return spec.automountServiceAccountToken;
    const stored = this.storage.get(storageKey(serviceaccounts.type, pod.metadata.namespace, podServiceAccount(spec)))?.object as api.ServiceAccount | undefined;
    if (stored?.automountServiceAccountToken !== false) return true;
    spec.automountServiceAccountToken = false;
    return false;
  }
}
