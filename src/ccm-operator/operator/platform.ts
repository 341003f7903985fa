// What the cloud-controller-manager operator reads from the cluster's facts, as pure functions:
// which cloud provider (if any) the platform in Infrastructure/cluster calls for, and where the
// provider's cloud config comes from.
//
// Platform: status.platformStatus.type (else the deprecated status.platform). OpenShift names a
// cloud whose CCM it does not ship as platform `External` with spec.platformSpec.external.
// platformName, and says in status.platformStatus.external.cloudControllerManager.state whether
// the nodes wait for an external CCM (`External`: the kubelets run with --cloud-provider=external
// and taint themselves uninitialized) or not (`None` or unset). bosun ships the CCM of the
// external platform named `local` (its local cloud), so External + `local` + state External is
// the one platform it deploys a CCM for; every other platform gets none, and the operator says so.
//
// Cloud config, as OpenShift's config-sync controller finds it: the ConfigMap
// openshift-config-managed/kube-cloud-config (key cloud.conf) when it exists, else the ConfigMap in
// openshift-config that Infrastructure spec.cloudConfig names (key spec.cloudConfig.key, default
// `config`). The operator copies its text into openshift-cloud-controller-manager/cloud-conf.
import type * as api from '../../api/index.js';
import { LOCAL_PROVIDER } from '../local-provider.js';

/** External platform names bosun has a CCM for, and the cloud provider each runs. */
export const EXTERNAL_PROVIDERS: Readonly<Record<string, string>> = { [LOCAL_PROVIDER]: LOCAL_PROVIDER };

export type PlatformDecision =
  /** Deploy the CCM running `provider`; `name` is used for its objects' names and labels. */
  | { deploy: true; provider: string; name: string }
  /** No CCM for this platform; `message` says why (it goes into Available's message). */
  | { deploy: false; message: string };

/** The platform's decision; undefined while Infrastructure/cluster has no platform yet. */
export function platformDecision(infrastructure: api.Infrastructure | undefined): PlatformDecision | undefined {
  const type: string | undefined = infrastructure?.status?.platformStatus?.type || infrastructure?.status?.platform || undefined;
  if (!type) return undefined;
  const none = (why: string): PlatformDecision => ({ deploy: false, message: `${why}; no cloud controller manager is deployed` });
  if (type !== 'External') return none(`platform ${type} has no cloud controller manager in bosun (only platform External named ${Object.keys(EXTERNAL_PROVIDERS).map((n) => `"${n}"`).join(', ')} has one)`);
  const name: string | undefined = infrastructure?.spec?.platformSpec?.external?.platformName || undefined;
  const state: string | undefined = infrastructure?.status?.platformStatus?.external?.cloudControllerManager?.state || undefined;
  if (state !== 'External') {
    return none(`platform External${name ? ` "${name}"` : ''} does not ask for an external cloud controller manager (status.platformStatus.external.cloudControllerManager.state is ${state ? `"${state}"` : 'unset'}, not "External")`);
  }
  const provider = name ? EXTERNAL_PROVIDERS[name] : undefined;
  if (!provider) return none(`platform External ${name ? `"${name}"` : 'without spec.platformSpec.external.platformName'} has no cloud controller manager in bosun (known: ${Object.keys(EXTERNAL_PROVIDERS).join(', ')})`);
  return { deploy: true, provider, name: name! };
}

export const MANAGED_CLOUD_CONFIG = { namespace: 'openshift-config-managed', name: 'kube-cloud-config', key: 'cloud.conf' };
export const CONFIG_NAMESPACE = 'openshift-config';
/** OpenShift's default key in the ConfigMap Infrastructure spec.cloudConfig names. */
export const DEFAULT_CLOUD_CONFIG_KEY = 'config';

export type CloudConfigSource = { text: string; from: string } | { missing: string };

/**
 * The cloud config's text and where it came from, or what is missing. `configMap(namespace, name)`
 * looks a ConfigMap up (from the operator's informers).
 */
export function cloudConfigFor(infrastructure: api.Infrastructure | undefined, configMap: (namespace: string, name: string) => api.ConfigMap | undefined): CloudConfigSource {
  const managed = configMap(MANAGED_CLOUD_CONFIG.namespace, MANAGED_CLOUD_CONFIG.name)?.data?.[MANAGED_CLOUD_CONFIG.key];
  if (typeof managed === 'string') return { text: managed, from: `ConfigMap ${MANAGED_CLOUD_CONFIG.namespace}/${MANAGED_CLOUD_CONFIG.name} key ${MANAGED_CLOUD_CONFIG.key}` };
  const ref: { name?: string; key?: string } | undefined = infrastructure?.spec?.cloudConfig;
  if (!ref?.name) return { missing: `Infrastructure/cluster spec.cloudConfig names no ConfigMap in ${CONFIG_NAMESPACE} (and there is no ${MANAGED_CLOUD_CONFIG.namespace}/${MANAGED_CLOUD_CONFIG.name})` };
  const key = ref.key || DEFAULT_CLOUD_CONFIG_KEY;
  const where = `ConfigMap ${CONFIG_NAMESPACE}/${ref.name}`;
  const cm = configMap(CONFIG_NAMESPACE, ref.name);
  if (!cm) return { missing: `${where}, named by Infrastructure/cluster spec.cloudConfig, does not exist` };
  const text = cm.data?.[key];
  if (typeof text !== 'string') return { missing: `${where} has no key "${key}"` };
  return { text, from: `${where} key ${key}` };
}
