// Bootstrap data for Cluster API machines, as OpenShift's cluster-capi-operator provides it: the
// MCO writes the Machine API's user data Secrets (openshift-machine-api/worker-user-data and
// master-user-data: a pointer Ignition config under `userData`); this controller keeps a copy of
// each in the Cluster API namespace under the bootstrap contract's key `value` (with
// `format: ignition`), so that a Machine's spec.bootstrap.dataSecretName: worker-user-data boots
// it from the machine-config server. The copy follows the source; a source without userData is
// reported and left alone.
import { Controller, TerminalError, resources } from '../kube/index.js';
import { sameJson } from '../kube/canonical.js';
import { CLUSTER_API_NAMESPACE, MACHINE_API_NAMESPACE } from './api.js';
import type { CapiContext } from './context.js';

export const USER_DATA_SECRETS = ['worker-user-data', 'master-user-data'] as const;
const SECRETS = resources.secrets;

export function bootstrapDataController(ctx: CapiContext, targetNamespace = CLUSTER_API_NAMESPACE): Controller {
  const sources = ctx.informer(SECRETS, { namespace: MACHINE_API_NAMESPACE });
  const targets = ctx.informer(SECRETS, { namespace: targetNamespace });
  const wanted = (name: string | undefined) => (USER_DATA_SECRETS as readonly string[]).includes(String(name));
  const controller = new Controller({
    name: 'bootstrap-data-controller',
    clock: ctx.clock,
    sync: async (name) => {
      const source = sources.get(name, MACHINE_API_NAMESPACE);
      if (!source) return; // nothing to copy (yet); the copy stays as the last good one
      const userData = source.data?.userData;
      if (!userData) throw new TerminalError(`Secret ${MACHINE_API_NAMESPACE}/${name} has no userData to copy`);
      const data = { value: userData, format: Buffer.from('ignition').toString('base64') };
      const existing = targets.get(name, targetNamespace) ?? (await ctx.client.read(SECRETS, name, targetNamespace));
      if (!existing) {
        await ctx.client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: targetNamespace }, type: 'Opaque', data });
      } else if (!sameJson(existing.data, data)) {
        await ctx.client.update(SECRETS, { ...existing, data });
      }
    },
  });
  controller.watch(sources, (s) => (wanted(s.metadata?.name) ? s.metadata.name : undefined));
  controller.watch(targets, (s) => (wanted(s.metadata?.name) ? s.metadata.name : undefined));
  return controller;
}
