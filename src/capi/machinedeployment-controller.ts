// The MachineDeployment controller (Cluster API's machinedeployment controller): one MachineSet
// per template, named `<deployment>-<machine-template-hash>`, labelled with the hash and
// annotated with its revision (machinedeployment.clusters.x-k8s.io/revision, one more than the
// highest so far when a template becomes current). A template change rolls the machines over
// (rollout.ts: RollingUpdate within maxSurge/maxUnavailable; OnDelete: the new set grows only as
// old machines are deleted by someone else); a change of `replicas` — `kubectl scale
// machinedeployment` through the scale subresource — resizes the current set. Old sets emptied by
// the rollout are deleted. Template labels and annotations reach the current set in place, without
// a rollout. Status: the sets' counts summed, the selector, phase, Available and RollingOut.
import type * as api from '../api/index.js';
import { Controller, TerminalError, controllerOf, controllerReference, enqueueOwner } from '../kube/index.js';
import { formatLabelSelector, fromLabelSelectorObject, storedSelectorMatches } from '../common/label-selectors.js';
import { ANNOTATION, API_VERSION, CONDITION, GROUP, LABEL, MACHINE_DEPLOYMENTS, MACHINE_SETS, desiredReplicas, eventTarget, isDeleting, setCapiCondition } from './api.js';
import { type CapiContext, informers, onUnpause, pausedCheck } from './context.js';
import { sameStatus } from './machine-status.js';
import { fenceposts, rollingStep, templateHash } from './rollout.js';

type MachineSet = api.MachineSet;
type MachineDeployment = api.MachineDeployment;
/** The replica counts a MachineSet reports, which its MachineDeployment sums. */
type ReplicaCount = 'replicas' | 'readyReplicas' | 'availableReplicas' | 'upToDateReplicas';

const revisionOf = (set: MachineSet) => Number.parseInt(set.metadata?.annotations?.[ANNOTATION.revision] ?? '0', 10) || 0;
const byCreation = (a: MachineSet, b: MachineSet) => String(a.metadata.creationTimestamp).localeCompare(String(b.metadata.creationTimestamp)) || a.metadata.name.localeCompare(b.metadata.name);

export function machineDeploymentController(ctx: CapiContext): Controller {
  const inf = informers(ctx);
  const paused = pausedCheck(ctx);
  const deployments = inf.machineDeployments();
  const sets = inf.machineSets();
  const events = ctx.events('machinedeployment-controller');

  /** The MachineSet's labels and template for the deployment's current template. */
  function setShape(deployment: MachineDeployment, hash: string): { labels: Record<string, string>; template: api.MachineTemplateSpec; selector: MachineSet['spec']['selector'] } {
    const template = structuredClone(deployment.spec.template);
    const labels = { ...(template.metadata?.labels ?? {}), [LABEL.deploymentName]: deployment.metadata.name, [LABEL.clusterName]: deployment.spec.clusterName, [LABEL.templateHash]: hash };
    template.metadata = { ...(template.metadata ?? {}), labels: { ...(template.metadata?.labels ?? {}), [LABEL.deploymentName]: deployment.metadata.name, [LABEL.templateHash]: hash } };
    const selector = { ...deployment.spec.selector, matchLabels: { ...(deployment.spec.selector.matchLabels ?? {}), [LABEL.templateHash]: hash } };
    return { labels, template, selector };
  }

  async function resize(set: MachineSet, replicas: number): Promise<void> {
    if ((set.spec.replicas ?? 1) === replicas) return;
    await ctx.client.update(MACHINE_SETS, { ...set, spec: { ...set.spec, replicas } });
  }

  async function writeStatus(deployment: MachineDeployment, owned: MachineSet[], current: MachineSet | undefined): Promise<void> {
    const now = new Date(ctx.clock.now());
    const sum = (field: ReplicaCount) => owned.reduce((n, s) => n + (s.status?.[field] ?? 0), 0);
    const desired = desiredReplicas(deployment);
    const replicas = sum('replicas');
    const available = sum('availableReplicas');
    const [, unavailable] = fenceposts(deployment);
    const old = owned.filter((s) => s !== current && ((s.spec.replicas ?? 0) > 0 || (s.status?.replicas ?? 0) > 0));
    let conditions = deployment.status?.conditions ?? [];
    conditions = setCapiCondition(conditions, available >= desired - unavailable
      ? { type: CONDITION.available, status: 'True', reason: 'Available', message: '' }
      : { type: CONDITION.available, status: 'False', reason: 'NotAvailable', message: `${available} available replicas, at least ${desired - unavailable} required (spec.replicas ${desired}, maxUnavailable ${unavailable})` }, now);
    conditions = setCapiCondition(conditions, old.length
      ? { type: CONDITION.rollingOut, status: 'True', reason: 'RollingOut', message: `Rolling out: ${old.map((s) => `${s.metadata.name} (${s.status?.replicas ?? 0} machines)`).join(', ')} to ${current?.metadata.name ?? 'a new MachineSet'}` }
      : { type: CONDITION.rollingOut, status: 'False', reason: 'NotRollingOut', message: '' }, now);
    const status: NonNullable<MachineDeployment['status']> = {
      ...(deployment.status ?? {}),
      selector: formatLabelSelector(fromLabelSelectorObject(deployment.spec.selector)),
      replicas,
      readyReplicas: sum('readyReplicas'),
      availableReplicas: available,
      upToDateReplicas: sum('upToDateReplicas'),
      phase: replicas < desired ? 'ScalingUp' : replicas > desired ? 'ScalingDown' : 'Running',
      observedGeneration: deployment.metadata.generation,
      conditions,
    };
    if (!sameStatus(status, deployment.status)) await ctx.client.update(MACHINE_DEPLOYMENTS, { ...deployment, status }, 'status');
  }

  async function sync(key: string): Promise<void> {
    const deployment = deployments.getByKey(key);
    if (!deployment || isDeleting(deployment) || paused(deployment)) return;
    if (!storedSelectorMatches(deployment.spec.selector, deployment.spec.template?.metadata?.labels ?? {})) {
      void events.event(eventTarget(deployment, 'MachineDeployment'), 'Warning', 'InvalidSelector', 'spec.selector does not match spec.template.metadata.labels');
      throw new TerminalError(`MachineDeployment ${key}: spec.selector does not match spec.template.metadata.labels`);
    }
    const hash = templateHash(deployment);
    const owned = sets.list().filter((s) => s.metadata.namespace === deployment.metadata.namespace && controllerOf(s)?.uid === deployment.metadata.uid).sort(byCreation);
    const current = owned.find((s) => s.metadata.labels?.[LABEL.templateHash] === hash);
    const old = owned.filter((s) => s !== current);
    const desired = desiredReplicas(deployment);
    const shape = setShape(deployment, hash);
    const maxRevision = Math.max(0, ...owned.map(revisionOf));

    if (!current) {
      const [surge] = fenceposts(deployment);
      const oldTotal = old.reduce((n, s) => n + (s.spec.replicas ?? 0), 0);
      const initial = deployment.spec.paused ? 0 : old.length === 0 ? desired : Math.max(0, Math.min(desired, desired + surge - oldTotal));
      const name = `${deployment.metadata.name}-${hash}`;
      await ctx.client.create(MACHINE_SETS, {
        apiVersion: API_VERSION,
        kind: 'MachineSet',
        metadata: {
          name,
          namespace: deployment.metadata.namespace,
          labels: shape.labels,
          annotations: { [ANNOTATION.revision]: String(maxRevision + 1), [ANNOTATION.desiredReplicas]: String(desired) },
          ownerReferences: [controllerReference({ apiVersion: API_VERSION, kind: 'MachineDeployment', ...deployment })],
        },
        spec: { clusterName: deployment.spec.clusterName, replicas: initial, selector: shape.selector, template: shape.template, ...(deployment.spec.deletion ? { deletion: deployment.spec.deletion } : {}) },
      });
      void events.event(eventTarget(deployment, 'MachineDeployment'), 'Normal', 'SuccessfulCreate', `Created MachineSet ${name} with ${initial} replicas (revision ${maxRevision + 1})`);
      return; // its event brings the deployment back
    }

    // Template metadata and revision reach the current set in place.
    const revision = revisionOf(current) === maxRevision && (maxRevision > 0) ? revisionOf(current) : maxRevision + 1;
    const annotations = { ...(current.metadata.annotations ?? {}), [ANNOTATION.revision]: String(revision), [ANNOTATION.desiredReplicas]: String(desired) };
    const inPlace = JSON.stringify([current.metadata.labels, current.metadata.annotations, current.spec.template.metadata, current.spec.deletion]) !== JSON.stringify([shape.labels, annotations, shape.template.metadata, deployment.spec.deletion]);
    if (inPlace) {
      await ctx.client.update(MACHINE_SETS, { ...current, metadata: { ...current.metadata, labels: shape.labels, annotations }, spec: { ...current.spec, template: { ...current.spec.template, metadata: shape.template.metadata }, deletion: deployment.spec.deletion } });
      return;
    }

    if (!deployment.spec.paused) {
      const strategy = deployment.spec.rollout?.strategy?.type ?? 'RollingUpdate';
      const active = old.filter((s) => (s.spec.replicas ?? 0) > 0);
      if (active.length === 0) await resize(current, desired);
      else if (strategy === 'OnDelete') {
        // Old sets keep what they still have; the new one fills the rest as machines are deleted.
        for (const s of active) await resize(s, Math.min(s.spec.replicas ?? 0, s.status?.replicas ?? 0));
        await resize(current, Math.max(0, desired - active.reduce((n, s) => n + Math.min(s.spec.replicas ?? 0, s.status?.replicas ?? 0), 0)));
      } else {
        const [surge, unavailable] = fenceposts(deployment);
        const state = (s: MachineSet) => ({ name: s.metadata.name, replicas: s.spec.replicas ?? 0, available: Math.min(s.status?.availableReplicas ?? 0, s.spec.replicas ?? 0) });
        const sizes = rollingStep(desired, surge, unavailable, state(current), active.map(state));
        for (const s of [current, ...active]) if (sizes.has(s.metadata.name)) await resize(s, sizes.get(s.metadata.name)!);
      }
      // Old sets the rollout emptied, with no machines left, are history: deleted.
      for (const s of old) {
        if ((s.spec.replicas ?? 0) === 0 && (s.status?.replicas ?? 0) === 0) await ctx.client.delete(MACHINE_SETS, s.metadata.name, s.metadata.namespace);
      }
    }
    await writeStatus(deployment, owned, current);
  }

  const controller = new Controller({ name: 'machinedeployment-controller', workers: 2, clock: ctx.clock, sync });
  controller.watch(deployments);
  controller.watch(inf.clusters(), onUnpause(deployments));
  controller.watch(sets, enqueueOwner({ group: GROUP, kind: 'MachineDeployment' }));
  return controller;
}
