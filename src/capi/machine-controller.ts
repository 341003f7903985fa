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
//      annotations that lead back to the Machine. The Node is looked up in the Machine's cluster:
//      a workload cluster's own API (its `<cluster>-kubeconfig`, a Node informer per cluster —
//      remote.ts), or the management API for the cluster bosun runs in; while a workload API cannot
//      be read, the node conditions are Unknown (ConnectionDown) and nodeRef stays;
//   5. status: conditions and phase (machine-status.ts).
// For a Machine being deleted, step by step (the Deleting condition says which step waits):
//   drain the Node (cordon, evictions honouring PDBs, until empty or
//   spec.deletion.nodeDrainTimeoutSeconds) → delete the bootstrap config and the infrastructure
//   machine (once no pre-terminate hook annotation `pre-terminate.delete.hook.machine.cluster.x-k8s.io/<owner>`
//   is left: KubeadmControlPlane holds its Machines with one until their etcd member is removed)
//   and wait until both are gone (the infrastructure provider's finalizer holds its object
//   until the instance is) → delete the Node → remove the finalizer. The annotation
//   machine.cluster.x-k8s.io/exclude-node-draining skips the drain. Drain and Node deletion happen
//   in the Node's cluster; when the whole Cluster is being deleted they are skipped, as Cluster API
//   skips them (the workload cluster goes anyway).
import type * as api from '../api/index.js';
import { Controller, type KubeClient, type ResourceRef, type SyncResult, controllerOf, isNotFound, keyOf, resources, rfc3339 } from '../kube/index.js';
import { ANNOTATION, API_VERSION, type BootstrapConfig, type InfraMachine, LABEL, MACHINES, MACHINE_FINALIZER, eventTarget, isDeleting } from './api.js';
import { type CapiContext, informers, onUnpause, pausedCheck } from './context.js';
import { drainPass } from './drain.js';
import { machineStatus, sameStatus } from './machine-status.js';
import { RemoteUnavailable, type WorkloadAccess, remoteClusters } from './remote.js';
import { templateHash } from './rollout.js';

/** Where a Machine's Node is read, or why it cannot be. */
type NodeAccess = WorkloadAccess | { unreachable: string };

/** How often a step that waits on something unwatched (a Secret, a drain) is looked at again. */
const POLL_MS = 5_000;

export function machineController(ctx: CapiContext): Controller {
  const inf = informers(ctx);
  const kubeadmConfigs = ctx.informer(resources.kubeadmConfigs);
  const paused = pausedCheck(ctx);
  const machines = inf.machines();
  const nodes = inf.nodes();
  const events = ctx.events('machine-controller');

  const clusters = inf.clusters();
  const remote = remoteClusters(ctx);

  /** The Machines a Node of the management API (or of one workload cluster, `cluster`) belongs to. */
  const machineForNode = (node: api.Node, cluster?: { namespace: string; name: string }): string[] => {
    const annotated = node.metadata?.annotations?.[ANNOTATION.machine];
    const namespace = node.metadata?.annotations?.[ANNOTATION.clusterNamespace];
    if (annotated && namespace) return [`${namespace}/${annotated}`];
    const providerID = node.spec?.providerID;
    if (!providerID) return [];
    return machines.list().filter((m) => m.spec?.providerID === providerID && (!cluster || (m.metadata.namespace === cluster.namespace && m.spec.clusterName === cluster.name))).map(keyOf);
  };

  /**
   * Where the Machine's Node lives: its Cluster's API (remote.ts). A Machine whose Cluster does not
   * exist (yet) is looked up in the management API, as before workload clusters existed.
   */
  async function nodeAccess(machine: api.Machine): Promise<NodeAccess> {
    const cluster = clusters.get(machine.spec.clusterName, machine.metadata.namespace);
    if (!cluster) return { local: true, client: ctx.client, nodes };
    try {
      return await remote.access(cluster);
    } catch (e) {
      if (e instanceof RemoteUnavailable) return { unreachable: e.message };
      throw e;
    }
  }

  const nodeIn = (access: WorkloadAccess, machine: api.Machine): api.Node | undefined => {
    const providerID = machine.spec?.providerID;
    return providerID ? access.nodes.list().find((n) => n.spec?.providerID === providerID) : undefined;
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

  async function writeStatus(machine: api.Machine, deleting?: { reason: string; message: string }, infra?: InfraMachine, bootstrap?: { ready: boolean; message?: string }, known?: NodeAccess): Promise<number | undefined> {
    const fresh = (await ctx.client.read(MACHINES, machine.metadata.name, machine.metadata.namespace)) ?? machine;
    const access = known ?? (await nodeAccess(fresh));
    const { status, recheckAfterMs } = machineStatus({
      machine: fresh, infra, upToDate: upToDate(fresh), deleting, now: ctx.clock.now(), certificatesExpiryDate: await certificatesExpiry(fresh),
      ...('unreachable' in access ? { nodeUnreachable: access.unreachable } : { node: nodeIn(access, fresh) }),
      bootstrapReady: bootstrap?.ready ?? fresh.status?.initialization?.bootstrapDataSecretCreated === true,
      bootstrapMessage: bootstrap?.message,
    });
    if (!sameStatus(status, fresh.status)) await ctx.client.update(MACHINES, { ...fresh, status: { ...status, lastUpdated: rfc3339(new Date(ctx.clock.now())) } }, 'status');
    return recheckAfterMs;
  }

  /**
   * When the Machine's certificates expire, as Cluster API's machine controller finds it: the
   * Machine's own certificates-expiry annotation, else its bootstrap config's (RFC 3339; a value
   * that is not a date is ignored).
   */
  async function certificatesExpiry(machine: api.Machine): Promise<string | undefined> {
    const valid = (v: string | undefined) => (v && Number.isFinite(Date.parse(v)) ? rfc3339(new Date(Date.parse(v))) : undefined);
    const own = valid(machine.metadata.annotations?.[ANNOTATION.certificatesExpiry]);
    if (own) return own;
    const ref = machine.spec?.bootstrap?.configRef;
    if (!ref?.name) return undefined;
    // A KubeadmConfig from the informer this controller watches them with; another kind read.
    const config = ref.kind === 'KubeadmConfig'
      ? kubeadmConfigs.get(ref.name, machine.metadata.namespace)
      : await ctx.client.read(await ctx.resolve<BootstrapConfig>(ref), ref.name, machine.metadata.namespace);
    return valid(config?.metadata.annotations?.[ANNOTATION.certificatesExpiry]);
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
  async function annotateNode(machine: api.Machine, access: NodeAccess): Promise<void> {
    if ('unreachable' in access) return;
    const node = nodeIn(access, machine);
    if (!node) return;
    const owner = controllerOf(machine);
    const wanted: Record<string, string> = {
      [ANNOTATION.machine]: machine.metadata.name,
      [ANNOTATION.clusterNamespace]: machine.metadata.namespace!,
      [LABEL.clusterName]: machine.spec.clusterName,
      ...(owner ? { [ANNOTATION.ownerKind]: owner.kind, [ANNOTATION.ownerName]: owner.name } : {}),
    };
    const annotations = node.metadata.annotations ?? {};
    if (Object.entries(wanted).some(([k, v]) => annotations[k] !== v)) await access.client.mergePatch(resources.nodes, node.metadata.name, undefined, { metadata: { annotations: wanted } });
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
    const access = await nodeAccess(machine);
    await annotateNode(machine, access);
    const recheck = await writeStatus(machine, undefined, infra, bootstrap, access);
    // A workload API not answering (or not yet listed) is looked at again: its Node events cannot come.
    if (!bootstrap.ready || !infra || 'unreachable' in access) return { requeueAfterMs: POLL_MS };
    return recheck !== undefined ? { requeueAfterMs: recheck } : undefined;
  }

  async function readBootstrapConfig(machine: api.Machine): Promise<{ resource: ResourceRef<BootstrapConfig>; config?: BootstrapConfig } | undefined> {
    const ref = machine.spec?.bootstrap?.configRef;
    if (!ref?.name) return undefined;
    const resource = await ctx.resolve<BootstrapConfig>(ref);
    return { resource, config: await ctx.client.read(resource, ref.name, machine.metadata.namespace) };
  }

  async function reconcileDelete(machine: api.Machine): Promise<SyncResult | void> {
    if (!(machine.metadata.finalizers ?? []).includes(MACHINE_FINALIZER)) return;
    const target = eventTarget(machine, 'Machine');
    const infra = await readInfra(machine);
    const bootstrap = await readBootstrapConfig(machine);
    const cluster = clusters.get(machine.spec.clusterName, machine.metadata.namespace);
    const access = await nodeAccess(machine);
    const wait = async (reason: string, message: string): Promise<SyncResult> => {
      await writeStatus(machine, { reason, message }, infra, undefined, access);
      return { requeueAfterMs: POLL_MS };
    };
    const reachable = 'unreachable' in access ? undefined : access;
    // A workload cluster being deleted takes its Nodes with it: no drain, no Node deletion (Cluster API's isDeleteNodeAllowed).
    const nodeSteps = !(cluster && isDeleting(cluster) && !reachable?.local);
    const nodeName = machine.status?.nodeRef?.name;
    const node = reachable ? (nodeIn(reachable, machine) ?? (nodeName ? reachable.nodes.get(nodeName) : undefined)) : undefined;

    // 1. Drain, unless excluded or timed out.
    const drainable = nodeSteps && machine.metadata.annotations?.[ANNOTATION.excludeNodeDraining] === undefined;
    if (drainable && (node || (!reachable && nodeName))) {
      const name = node?.metadata.name ?? nodeName!;
      const started = machine.status?.deletion?.nodeDrainStartTime;
      if (!started) {
        const fresh = (await ctx.client.read(MACHINES, machine.metadata.name, machine.metadata.namespace)) ?? machine;
        await ctx.client.update(MACHINES, { ...fresh, status: { ...(fresh.status ?? {}), deletion: { ...(fresh.status?.deletion ?? {}), nodeDrainStartTime: rfc3339(new Date(ctx.clock.now())) } } }, 'status');
        void events.event(target, 'Normal', 'DrainingNode', `Draining Node ${name}`);
      }
      const timeoutS = machine.spec?.deletion?.nodeDrainTimeoutSeconds ?? 0;
      const timedOut = timeoutS > 0 && started !== undefined && ctx.clock.now() - Date.parse(started) > timeoutS * 1000;
      if (timedOut) {
        void events.event(target, 'Warning', 'FailedDrainNode', `Node ${name} not drained within ${timeoutS}s; going on with the deletion`);
      } else if (!reachable || !node) {
        return wait('DrainingNode', `Cannot drain Node ${name}: ${'unreachable' in access ? access.unreachable : 'not found'}`);
      } else {
        const pass = await drainPass(reachable.client, node);
        if (!pass.done) {
          const blocked = pass.blocked.length ? ` Cannot evict: ${pass.blocked.join('; ')}` : '';
          return wait('DrainingNode', `Drain not completed yet: ${pass.remaining} pods still on Node ${name}.${blocked}`);
        }
        void events.event(target, 'Normal', 'SuccessfulDrainNode', `Success draining Node ${name}`);
      }
    }

    // 2. Pre-terminate hooks (Cluster API's lifecycle hooks): whoever set one — KCP, to remove the
    //    Machine's etcd member once it is drained — takes it away when the machine may go.
    const hooks = Object.keys(machine.metadata.annotations ?? {}).filter((k) => k.startsWith(`${ANNOTATION.preTerminateHookPrefix}/`));
    if (hooks.length) return wait('WaitingForPreTerminateHook', `Waiting for pre-terminate hooks to succeed (hooks: ${hooks.map((k) => k.slice(ANNOTATION.preTerminateHookPrefix.length + 1)).join(', ')})`);

    // 3. The bootstrap config and the infrastructure machine, and with it the instance.
    if (bootstrap?.config && !isDeleting(bootstrap.config)) {
      await ctx.client.delete(bootstrap.resource, bootstrap.config.metadata.name, machine.metadata.namespace).catch((e) => { if (!isNotFound(e)) throw e; });
    }
    if (infra && !isDeleting(infra)) await ctx.client.delete(await ctx.resolve(machine.spec.infrastructureRef), infra.metadata.name, machine.metadata.namespace);
    const left = [infra && `${infra.kind} ${infra.metadata.name}`, bootstrap?.config && `${bootstrap.config.kind} ${bootstrap.config.metadata.name}`].filter(Boolean);
    if (left.length) return wait('WaitingForInfrastructureDeletion', `Waiting for ${left.join(' and ')} to be deleted`);

    // 4. The Node, in its cluster.
    if (nodeSteps && node && reachable) await deleteNode(reachable.client, node.metadata.name, target);
    else if (nodeSteps && !reachable && nodeName) {
      void events.event(target, 'Warning', 'FailedDeleteNode', `Node ${nodeName} not deleted: ${(access as { unreachable: string }).unreachable}`);
    }

    // 5. Let it go.
    const fresh = await ctx.client.read(MACHINES, machine.metadata.name, machine.metadata.namespace);
    if (fresh) await ctx.client.update(MACHINES, { ...fresh, metadata: { ...fresh.metadata, finalizers: (fresh.metadata.finalizers ?? []).filter((f) => f !== MACHINE_FINALIZER) } });
  }

  async function deleteNode(client: KubeClient, name: string, target: api.Machine): Promise<void> {
    try {
      await client.delete(resources.nodes, name);
      void events.event(target, 'Normal', 'MachineNodeDeleted', `Node ${name} deleted`);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  const controller = new Controller({
    name: 'machine-controller',
    workers: 4,
    resyncPeriodMs: 60_000,
    clock: ctx.clock,
    // The workload clusters' Node informers run while this controller does.
    onStarted: (signal) => remote.attach(signal),
    sync: async (key) => {
      const machine = machines.getByKey(key);
      if (!machine || paused(machine)) return;
      return isDeleting(machine) ? reconcileDelete(machine) : reconcileLive(machine);
    },
  });
  controller.watch(machines);
  controller.watch(inf.clusters(), onUnpause(machines));
  controller.watch(nodes, (node) => machineForNode(node));
  remote.onNodeEvent((cluster, _type, node) => {
    for (const key of machineForNode(node, cluster)) controller.enqueue(key);
  });
  remote.onConnectionChange((cluster) => {
    for (const m of machines.list()) if (m.metadata.namespace === cluster.namespace && m.spec?.clusterName === cluster.name) controller.enqueue(keyOf(m));
  });
  controller.watch(kubeadmConfigs, (config) => {
    const owner = (config.metadata?.ownerReferences ?? []).find((r) => r.kind === 'Machine');
    return owner ? `${config.metadata.namespace}/${owner.name}` : undefined;
  });
  controller.watch(inf.localMachines(), (infra) => {
    const owner = (infra.metadata?.ownerReferences ?? []).find((r) => r.kind === 'Machine');
    return owner ? `${infra.metadata.namespace}/${owner.name}` : undefined;
  });
  return controller;
}
