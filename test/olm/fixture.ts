// An API server with OLM's CRDs established, a client, and the objects OLM's tests build on.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { KubeClient, loadKubeConfig } from '../../src/kube/index.js';
import { startTestApiServer, type TestApiServer } from '../helpers/apiserver.js';

export const MANIFESTS = new URL('../../release-payload/manifests/', import.meta.url).pathname;
export const OLM_CRDS = readdirSync(MANIFESTS).filter((f) => /^0000_50_olm_01_.*\.crd\.yaml$/.test(f));
export const OLM_CRD_NAMES = ['catalogsources', 'subscriptions', 'installplans', 'clusterserviceversions', 'operatorgroups'].map((r) => `crd/${r}.operators.coreos.com`);

export async function olmApiServer(): Promise<{ api: TestApiServer; client: KubeClient }> {
  const api = await startTestApiServer();
  await api.kubectlOk(['apply', ...OLM_CRDS.flatMap((f) => ['-f', join(MANIFESTS, f)])]);
  await api.kubectlOk(['wait', '--for=condition=Established', '--timeout=20s', ...OLM_CRD_NAMES]);
  return { api, client: new KubeClient(loadKubeConfig(api.kubeconfigPath)) };
}
