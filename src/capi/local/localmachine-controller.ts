// The local infrastructure provider's LocalMachine controller, following Cluster API's
// InfraMachine contract:
//   - a LocalMachine acts only once a Machine owns it and that Machine names its bootstrap data
//     (spec.bootstrap.dataSecretName: a Secret whose `value` is the Ignition config);
//   - it adds its finalizer, then creates a cloud instance named as the LocalMachine (which is
//     the Node's name) of spec.instanceType, in the Machine's failure domain (a zone; none given:
//     the cloud picks the least used), with the bootstrap data as user data — or finds the one it
//     made before (the instance name is the idempotency key);
//   - spec.providerID `local://<instance-id>`; status.addresses, status.failureDomain,
//     status.instanceID/instanceState; status.initialization.provisioned once the instance runs;
//   - an instance that is terminated behind its back is reported (Ready=False,
//     InstanceTerminated) and not replaced: machines are immutable, a health check replaces them;
//   - in a workload cluster (one with its own API, remote.ts), the Node the instance registered
//     gets spec.providerID `local://<instance-id>` from this controller, as CAPD's machine
//     controller sets it (a workload cluster runs no cloud controller manager of ours), so that
//     the Machine controller can match Node and Machine;
//   - on delete: terminate the instance, and only once it is gone remove the finalizer — so the
//     Machine's own deletion waits for the instance.
import { CloudError } from '../../cloud/errors.js';
import type { CloudClient } from '../../cloud/client.js';
import type { Instance } from '../../cloud/types.js';
import type * as api from '../../api/index.js';
import { Controller, type SyncResult, TerminalError, isConflict, isNotFound, resources } from '../../kube/index.js';
import { LOCAL_MACHINES, LOCAL_MACHINE_FINALIZER, isDeleting, setCapiCondition } from '../api.js';
import { type CapiContext, informers, onUnpause, pausedCheck } from '../context.js';
import { sameStatus } from '../machine-status.js';
import { RemoteUnavailable, remoteClusters } from '../remote.js';

export const PROVIDER_ID_PREFIX = 'local://';
/** How often a booting instance, or a running one, is looked at (the cloud sends no events). */
const BOOTING_POLL_MS = 1_000;
const RUNNING_POLL_MS = 15_000;

export function localMachineController(ctx: CapiContext, cloud: CloudClient): Controller {
  const inf = informers(ctx);
  const paused = pausedCheck(ctx);
  const localMachines = inf.localMachines();
  const machines = inf.machines();
  const clusters = inf.clusters();
  const remote = remoteClusters(ctx);

  /** Sets the workload Node's spec.providerID (once: it is immutable) when the Machine has no nodeRef yet. */
  async function setWorkloadProviderID(lm: api.LocalMachine, machine: api.Machine, providerID: string): Promise<void> {
    if (machine.status?.nodeRef?.name) return;
    const cluster = machine.spec?.clusterName ? clusters.get(machine.spec.clusterName, machine.metadata.namespace) : undefined;
    if (!cluster) return;
    try {
      const access = await remote.access(cluster);
      if (access.local) return;
      const node = access.nodes.get(lm.metadata.name);
      if (!node || node.spec?.providerID) return;
      await access.client.update(resources.nodes, { ...node, spec: { ...(node.spec ?? {}), providerID } });
    } catch (e) {
      // Not reachable yet, or the Node changed or went under us: the next poll tries again.
      if (!(e instanceof RemoteUnavailable || isConflict(e) || isNotFound(e))) throw e;
    }
  }

  const ownerMachine = (lm: api.LocalMachine): api.Machine | undefined => {
    const ref = (lm.metadata.ownerReferences ?? []).find((r) => r.kind === 'Machine' && r.controller);
    return ref ? machines.get(ref.name, lm.metadata.namespace) : undefined;
  };

  async function findInstance(lm: api.LocalMachine): Promise<Instance | undefined> {
    const id = lm.status?.instanceID;
    if (id) {
      try {
        return await cloud.getInstance(id);
      } catch (e) {
        if (e instanceof CloudError && e.status === 404) return undefined;
        throw e;
      }
    }
    const live = (await cloud.listInstances({ names: [lm.metadata.name] })).filter((i) => i.state !== 'terminated');
    return live[0];
  }

  async function writeStatus(lm: api.LocalMachine, instance: Instance | undefined, ready: { status: boolean; reason: string; message?: string }): Promise<void> {
    const now = new Date(ctx.clock.now());
    const status: NonNullable<api.LocalMachine['status']> = { ...(lm.status ?? {}) };
    if (instance) {
      status.instanceID = instance.id;
      status.instanceState = instance.state;
      status.failureDomain = instance.zone;
      status.addresses = [
        { type: 'InternalIP', address: instance.privateIp },
        { type: 'Hostname', address: instance.name },
        { type: 'InternalDNS', address: instance.name },
      ];
      if (instance.state === 'running') status.initialization = { provisioned: true };
    }
    status.conditions = setCapiCondition(lm.status?.conditions, { type: 'Ready', status: ready.status ? 'True' : 'False', reason: ready.reason, message: ready.message ?? '' }, now);
    if (!sameStatus(status, lm.status)) await ctx.client.update(LOCAL_MACHINES, { ...lm, status }, 'status');
  }

  async function reconcileDelete(lm: api.LocalMachine): Promise<SyncResult | void> {
    if (!(lm.metadata.finalizers ?? []).includes(LOCAL_MACHINE_FINALIZER)) return;
    const instance = await findInstance(lm);
    if (instance && instance.state !== 'terminated') {
      await cloud.operate('terminate', instance.id);
      const after = await cloud.getInstance(instance.id).catch(() => undefined);
      if (after && after.state !== 'terminated') return { requeueAfterMs: BOOTING_POLL_MS };
    }
    await ctx.client.update(LOCAL_MACHINES, { ...lm, metadata: { ...lm.metadata, finalizers: (lm.metadata.finalizers ?? []).filter((f) => f !== LOCAL_MACHINE_FINALIZER) } });
  }

  async function reconcileLive(lm: api.LocalMachine): Promise<SyncResult | void> {
    const machine = ownerMachine(lm);
    if (!machine) return void (await writeStatus(lm, undefined, { status: false, reason: 'WaitingForMachine', message: 'Waiting for a Machine to own this LocalMachine' }));
    const secretName = machine.spec?.bootstrap?.dataSecretName;
    if (!secretName) return void (await writeStatus(lm, undefined, { status: false, reason: 'WaitingForBootstrapData', message: `Machine ${machine.metadata.name} has no spec.bootstrap.dataSecretName` }));
    if (!(lm.metadata.finalizers ?? []).includes(LOCAL_MACHINE_FINALIZER)) {
      await ctx.client.update(LOCAL_MACHINES, { ...lm, metadata: { ...lm.metadata, finalizers: [...(lm.metadata.finalizers ?? []), LOCAL_MACHINE_FINALIZER] } });
      return;
    }
    let instance = await findInstance(lm);
    if (!instance && lm.status?.instanceID) {
      // Made once and gone now: the cloud no longer knows it at all.
      await writeStatus(lm, undefined, { status: false, reason: 'InstanceTerminated', message: `instance ${lm.status.instanceID} no longer exists in the local cloud` });
      return;
    }
    if (!instance) {
      const secret = await ctx.client.read(resources.secrets, secretName, lm.metadata.namespace);
      const value = secret?.data?.value;
      if (!value) {
        await writeStatus(lm, undefined, { status: false, reason: 'WaitingForBootstrapData', message: `bootstrap Secret ${lm.metadata.namespace}/${secretName} ${secret ? 'has no "value"' : 'does not exist'}` });
        return { requeueAfterMs: 5_000 };
      }
      try {
        instance = await cloud.createInstance({
          name: lm.metadata.name,
          type: lm.spec?.instanceType,
          ...(machine.spec?.failureDomain ? { zone: machine.spec.failureDomain } : {}),
          userData: Buffer.from(value, 'base64').toString('utf8'),
        });
      } catch (e) {
        if (e instanceof CloudError && e.status === 400) {
          await writeStatus(lm, undefined, { status: false, reason: 'InstanceCreateFailed', message: e.message });
          throw new TerminalError(`LocalMachine ${lm.metadata.namespace}/${lm.metadata.name}: ${e.message}`);
        }
        throw e;
      }
    }
    const providerID = `${PROVIDER_ID_PREFIX}${instance.id}`;
    if (lm.spec?.providerID !== providerID) {
      lm = await ctx.client.update(LOCAL_MACHINES, { ...lm, spec: { ...lm.spec, providerID } });
    }
    if (instance.state === 'terminated' || instance.state === 'stopped' || instance.state === 'stopping') {
      const reason = instance.state === 'terminated' ? 'InstanceTerminated' : 'InstanceStopped';
      await writeStatus(lm, instance, { status: false, reason, message: `instance ${instance.id} is ${instance.state}` });
      return instance.state === 'terminated' ? undefined : { requeueAfterMs: RUNNING_POLL_MS };
    }
    if (instance.state === 'pending' || instance.machine.phase !== 'Up') {
      const failed = instance.machine.phase === 'Failed';
      await writeStatus(lm, instance, { status: false, reason: failed ? 'BootFailed' : 'InstanceBooting', message: instance.machine.message ?? `instance ${instance.id} is ${instance.state}` });
      return { requeueAfterMs: failed ? RUNNING_POLL_MS : BOOTING_POLL_MS };
    }
    await writeStatus(lm, instance, { status: true, reason: 'InstanceRunning' });
    await setWorkloadProviderID(lm, machine, providerID);
    // Until the Machine has its Node, look again soon: the Node registers a moment after boot.
    return { requeueAfterMs: machine.status?.nodeRef?.name ? RUNNING_POLL_MS : BOOTING_POLL_MS * 3 };
  }

  const controller = new Controller({
    name: 'localmachine-controller',
    workers: 4,
    clock: ctx.clock,
    sync: async (key) => {
      const lm = localMachines.getByKey(key);
      if (!lm || paused(lm)) return;
      return isDeleting(lm) ? reconcileDelete(lm) : reconcileLive(lm);
    },
  });
  controller.watch(localMachines);
  controller.watch(inf.clusters(), onUnpause(localMachines));
  // The owner Machine's bootstrap data or failure domain may arrive after the LocalMachine.
  controller.watch(machines, (m) => (m.spec?.infrastructureRef?.kind === 'LocalMachine' ? `${m.metadata.namespace}/${m.spec.infrastructureRef.name}` : undefined));
  return controller;
}
