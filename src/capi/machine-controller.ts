// The Machine controller (Cluster API's machine controller). For a Machine that lives:
//   1. its finalizer `machine.cluster.x-k8s.io` and cluster-name label;
//   2. bootstrap: spec.bootstrap.configRef's object (a KubeadmConfig) is made the Machine's
//      (controller ownerReference) and its status.dataSecretName, once it reports
//      status.initialization.dataSecretCreated, becomes spec.bootstrap.dataSecretName; that names
//      a Secret in the Machine's namespace;
//   3. infrastructure: the object spec.infrastructureRef names is made the Machine's (controller
//      ownerReference) so its provider acts on it; once it reports
//      status.initialization.provisioned, its spec.providerID becomes the Machine's;
//   4. node: the Node whose spec.providerID is the Machine's becomes status.nodeRef, and gets the
//      annotations that lead back to the Machine;
//   5. status: conditions and phase (machine-status.ts).
// For a Machine being deleted, step by step (the Deleting condition says which step waits):
//   drain the Node (cordon, evictions honouring PDBs, until empty or
//   spec.deletion.nodeDrainTimeoutSeconds) → delete the infrastructure machine and wait until it
//   is gone (its provider's finalizer holds it until the instance is) → delete the Node → remove
//   the finalizer. The annotation machine.cluster.x-k8s.io/exclude-node-draining skips the drain.
import type * as api from '../api/index.js';
import { Controller, type ResourceRef, type SyncResult, controllerOf, isNotFound, keyOf, resources, rfc3339 } from '../kube/index.js';
import { ANNOTATION, API_VERSION, type BootstrapConfig, type InfraMachine, LABEL, MACHINES, MACHINE_FINALIZER, eventTarget, isDeleting } from './api.js';
import { type CapiContext, informers, onUnpause, pausedCheck } from './context.js';
import { drainPass } from './drain.js';
import { machineStatus, sameStatus } from './machine-status.js';
import { templateHash } from './rollout.js';

/** How often a step that waits on something unwatched (a Secret, a drain) is looked at again. */
const POLL_MS = 5_000;

export function machineController(ctx: CapiContext): Controller {
  const inf = informers(ctx);
  const paused = pausedCheck(ctx);
  const machines = inf.machines();
  const nodes = inf.nodes();
  const events = ctx.events('machine-controller');

  const machineForNode = (node: api.Node): string[] => {
    const annotated = node.metadata?.annotations?.[ANNOTATION.machine];
    const namespace = node.metadata?.annotations?.[ANNOTATION.clusterNamespace];
    if (annotated && namespace) return [`${namespace}/${annotated}`];
    const providerID = node.spec?.providerID;
    return providerID ? machines.list().filter((m) => m.spec?.providerID === providerID).map(keyOf) : [];
  };
  const nodeFor = (machine: api.Machine): api.Node | undefined => {
    const providerID = machine.spec?.providerID;
    return providerID ? nodes.list().find((n) => n.spec?.providerID === providerID) : undefined;
  };

  /** Whether the Machine's MachineSet carries its MachineDeployment's current template hash. */
  const upToDate = (machine: api.Machine): boolean | undefined => {
    const setRef = controllerOf(machine);
    if (setRef?.kind !== 'MachineSet') return undefined;
    const set = inf.machineSets().get(setRef.name, machine.metadata.namespace);
    const deploymentRef = set && controllerOf(set);
    if (!set || deploymentRef?.kind !== 'MachineDeployment') return undefined;
    const deployment = inf.machineDeployments().get(deploymentRef.name, machine.metadata.namespace);
    return deployment ? set.metadata.labels?.[LABEL.templateHash] === templateHash(deployment) : undefined;
  };

  async function writeStatus(machine: api.Machine, deleting?: { reason: string; message: string }, infra?: InfraMachine, bootstrap?: { ready: boolean; message?: string }): Promise<number | undefined> {
    const fresh = (await ctx.client.read(MACHINES, machine.metadata.name, machine.metadata.namespace)) ?? machine;
    const { status, recheckAfterMs } = machineStatus({
      machine: fresh, infra, node: nodeFor(fresh), upToDate: upToDate(fresh), deleting, now: ctx.clock.now(),
      bootstrapReady: bootstrap?.ready ?? fresh.status?.initialization?.bootstrapDataSecretCreated === true,
      bootstrapMessage: bootstrap?.message,
    });
    if (!sameStatus(status, fresh.status)) await ctx.client.update(MACHINES, { ...fresh, status: { ...status, lastUpdated: rfc3339(new Date(ctx.clock.now())) } }, 'status');
    return recheckAfterMs;
  }

  async function readInfra(machine: api.Machine): Promise<InfraMachine | undefined> {
    const ref = machine.spec?.infrastructureRef;
    if (!ref?.name) return undefined;
    return ctx.client.read(await ctx.resolve<InfraMachine>(ref), ref.name, machine.metadata.namespace);
  }

  /**
   * Bootstrap, as Cluster API's machine controller does it: with spec.bootstrap.configRef, the
   * Machine becomes the controller of the config (so its provider acts on it) and, once the config
   * reports status.initialization.dataSecretCreated, its status.dataSecretName is copied to
   * spec.bootstrap.dataSecretName; with a dataSecretName alone, that Secret must exist.
   */
  async function reconcileBootstrap(machine: api.Machine): Promise<{ ready: boolean; message?: string }> {
    const configRef = machine.spec?.bootstrap?.configRef;
    let secretName = machine.spec?.bootstrap?.dataSecretName;
    if (configRef && !secretName) {
      const resource = await ctx.resolve<BootstrapConfig>(configRef);
      let config = await ctx.client.read(resource, configRef.name, machine.metadata.namespace);
      if (!config) return { ready: false, message: `waiting for ${configRef.kind} ${machine.metadata.namespace}/${configRef.name} (spec.bootstrap.configRef) to exist` };
      config = await adopt(resource, config, machine);
      const created = config.status?.initialization?.dataSecretCreated === true && config.status.dataSecretName;
      if (!created) {
        const why = (config.status?.conditions ?? []).find((c) => c.type === 'DataSecretAvailable' && c.status !== 'True');
        return { ready: false, message: `waiting for ${configRef.kind} ${configRef.name} to create the bootstrap data${why?.message ? `: ${why.message}` : ''}` };
      }
      secretName = config.status!.dataSecretName!;
      await ctx.client.update(MACHINES, { ...machine, spec: { ...machine.spec, bootstrap: { ...machine.spec.bootstrap, dataSecretName: secretName } } });
    }
    if (!secretName) return { ready: false, message: 'spec.bootstrap.dataSecretName is not set' };
    const secret = await ctx.client.read(resources.secrets, secretName, machine.metadata.namespace);
    return secret ? { ready: true } : { ready: false, message: `bootstrap data Secret ${machine.metadata.namespace}/${secretName} does not exist` };
  }

  /** Makes the Machine the controller of a provider object it references and gives it the cluster-name label. */
  async function adopt<T extends api.KubeObject>(resource: ResourceRef<T>, object: T, machine: api.Machine): Promise<T> {
    const owners = object.metadata.ownerReferences ?? [];
    const cluster = machine.spec.clusterName;
    if (owners.some((o) => o.uid === machine.metadata.uid) && object.metadata.labels?.[LABEL.clusterName] === cluster) return object;
    const ownerReferences = [...owners.filter((o) => !o.controller), { apiVersion: machine.apiVersion ?? API_VERSION, kind: 'Machine', name: machine.metadata.name, uid: machine.metadata.uid!, controller: true, blockOwnerDeletion: true }];
    return ctx.client.update(resource, { ...object, metadata: { ...object.metadata, ownerReferences, labels: { ...(object.metadata.labels ?? {}), [LABEL.clusterName]: cluster } } });
  }

  /** Makes the Machine the controller of its infrastructure machine; sets its providerID from it. */
  async function reconcileInfrastructure(machine: api.Machine, infra: InfraMachine): Promise<InfraMachine> {
    infra = await adopt(await ctx.resolve<InfraMachine>(machine.spec.infrastructureRef), infra, machine);
    const providerID = infra.spec?.providerID;
    if (infra.status?.initialization?.provisioned === true && providerID && machine.spec.providerID !== providerID) {
      await ctx.client.update(MACHINES, { ...machine, spec: { ...machine.spec, providerID } });
    }
    return infra;
  }

  /** The Node leads back to its Machine (Cluster API's node annotations). */
  async function annotateNode(machine: api.Machine): Promise<void> {
    const node = nodeFor(machine);
    if (!node) return;
    const owner = controllerOf(machine);
    const wanted: Record<string, string> = {
      [ANNOTATION.machine]: machine.metadata.name,
      [ANNOTATION.clusterNamespace]: machine.metadata.namespace!,
      [LABEL.clusterName]: machine.spec.clusterName,
      ...(owner ? { [ANNOTATION.ownerKind]: owner.kind, [ANNOTATION.ownerName]: owner.name } : {}),
    };
    const annotations = node.metadata.annotations ?? {};
    if (Object.entries(wanted).some(([k, v]) => annotations[k] !== v)) await ctx.client.mergePatch(resources.nodes, node.metadata.name, undefined, { metadata: { annotations: wanted } });
  }

  async function reconcileLive(machine: api.Machine): Promise<SyncResult | void> {
    const labels = machine.metadata.labels ?? {};
    if (!(machine.metadata.finalizers ?? []).includes(MACHINE_FINALIZER) || labels[LABEL.clusterName] !== machine.spec.clusterName) {
      await ctx.client.update(MACHINES, {
        ...machine,
        metadata: { ...machine.metadata, finalizers: [...new Set([...(machine.metadata.finalizers ?? []), MACHINE_FINALIZER])], labels: { ...labels, [LABEL.clusterName]: machine.spec.clusterName } },
      });
      return; // the update's event brings the Machine back
    }
    const bootstrap = await reconcileBootstrap(machine);
    let infra = await readInfra(machine);
    if (infra && !isDeleting(infra)) infra = await reconcileInfrastructure(machine, infra);
    await annotateNode(machine);
    const recheck = await writeStatus(machine, undefined, infra, bootstrap);
    if (!bootstrap.ready || !infra) return { requeueAfterMs: POLL_MS };
    return recheck !== undefined ? { requeueAfterMs: recheck } : undefined;
  }

  async function reconcileDelete(machine: api.Machine): Promise<SyncResult | void> {
    if (!(machine.metadata.finalizers ?? []).includes(MACHINE_FINALIZER)) return;
    const node = nodeFor(machine) ?? (machine.status?.nodeRef?.name ? nodes.get(machine.status.nodeRef.name) : undefined);
    const target = eventTarget(machine, 'Machine');
    const infra = await readInfra(machine);
    const wait = async (reason: string, message: string): Promise<SyncResult> => {
      await writeStatus(machine, { reason, message }, infra);
      return { requeueAfterMs: POLL_MS };
    };

    // 1. Drain, unless excluded or timed out.
    if (node && machine.metadata.annotations?.[ANNOTATION.excludeNodeDraining] === undefined) {
      const started = machine.status?.deletion?.nodeDrainStartTime;
      if (!started) {
        const fresh = (await ctx.client.read(MACHINES, machine.metadata.name, machine.metadata.namespace)) ?? machine;
        await ctx.client.update(MACHINES, { ...fresh, status: { ...(fresh.status ?? {}), deletion: { ...(fresh.status?.deletion ?? {}), nodeDrainStartTime: rfc3339(new Date(ctx.clock.now())) } } }, 'status');
        void events.event(target, 'Normal', 'DrainingNode', `Draining Node ${node.metadata.name}`);
      }
      const timeoutS = machine.spec?.deletion?.nodeDrainTimeoutSeconds ?? 0;
      const timedOut = timeoutS > 0 && started !== undefined && ctx.clock.now() - Date.parse(started) > timeoutS * 1000;
      if (!timedOut) {
        const pass = await drainPass(ctx.client, node);
        if (!pass.done) {
          const blocked = pass.blocked.length ? ` Cannot evict: ${pass.blocked.join('; ')}` : '';
          return wait('DrainingNode', `Drain not completed yet: ${pass.remaining} pods still on Node ${node.metadata.name}.${blocked}`);
        }
        void events.event(target, 'Normal', 'SuccessfulDrainNode', `Success draining Node ${node.metadata.name}`);
      } else {
        void events.event(target, 'Warning', 'FailedDrainNode', `Node ${node.metadata.name} not drained within ${timeoutS}s; going on with the deletion`);
      }
    }

    // 2. The infrastructure machine, and with it the instance.
    if (infra) {
      if (!isDeleting(infra)) await ctx.client.delete(await ctx.resolve(machine.spec.infrastructureRef), infra.metadata.name, machine.metadata.namespace);
      return wait('WaitingForInfrastructureDeletion', `Waiting for ${infra.kind} ${infra.metadata.name} to be deleted`);
    }

    // 3. The Node.
    if (node) {
      try {
        await ctx.client.delete(resources.nodes, node.metadata.name);
        void events.event(target, 'Normal', 'MachineNodeDeleted', `Node ${node.metadata.name} deleted`);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }

    // 4. Let it go.
    const fresh = await ctx.client.read(MACHINES, machine.metadata.name, machine.metadata.namespace);
    if (fresh) await ctx.client.update(MACHINES, { ...fresh, metadata: { ...fresh.metadata, finalizers: (fresh.metadata.finalizers ?? []).filter((f) => f !== MACHINE_FINALIZER) } });
  }

  const controller = new Controller({
    name: 'machine-controller',
    workers: 4,
    resyncPeriodMs: 60_000,
    clock: ctx.clock,
    sync: async (key) => {
      const machine = machines.getByKey(key);
      if (!machine || paused(machine)) return;
      return isDeleting(machine) ? reconcileDelete(machine) : reconcileLive(machine);
    },
  });
  controller.watch(machines);
  controller.watch(inf.clusters(), onUnpause(machines));
  controller.watch(nodes, (node) => machineForNode(node));
  controller.watch(ctx.informer(resources.kubeadmConfigs), (config) => {
    const owner = (config.metadata?.ownerReferences ?? []).find((r) => r.kind === 'Machine');
    return owner ? `${config.metadata.namespace}/${owner.name}` : undefined;
  });
  controller.watch(inf.localMachines(), (infra) => {
    const owner = (infra.metadata?.ownerReferences ?? []).find((r) => r.kind === 'Machine');
    return owner ? `${infra.metadata.namespace}/${owner.name}` : undefined;
  });
  return controller;
}
