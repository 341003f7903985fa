// The OLM operator's ClusterServiceVersion controller: observes each CSV's world — the CSV that
// replaces it, its namespace's OperatorGroups, the CRDs it owns and requires, its Deployments —
// asks csv-phase.ts for the phase, applies the install strategy (install-strategy.ts) when told,
// and writes the phase with its reason, message, history (status.conditions) and requirementStatus.
// The CSV gets OLM's olm.operatorGroup / olm.operatorNamespace / olm.targetNamespaces annotations.
// A CSV that reached Deleting is deleted (what it owns goes with it; its CRDs stay). When a CSV is
// gone, what it had outside its namespace (labelled olm.owner) is removed.
import type * as api from '../api/index.js';
import { Controller, type Informer, type ResourceDefinition, applyObject, isCrdEstablished, resources, rfc3339 } from '../kube/index.js';
import type { OlmContext } from './context.js';
import { type CsvObservation, deploymentHealth, nextCsvPhase, operatorGroupProblem } from './csv-phase.js';
import { COPIED_FROM } from './copied-csv-controller.js';
import { packageLabel } from './install-plan.js';
import { OWNER_LABELS, groupAnnotations, strategyObjects, subscriptionConfig } from './install-strategy.js';
import { writeStatus } from './status.js';

/** The history kept in status.conditions (OLM keeps a bounded list too). */
const HISTORY = 20;

/** What a CSV needs of its CRDs: each owned or required CRD present and Established, serving the version. */
export function crdRequirements(csv: api.ClusterServiceVersion, crds: Informer<api.CustomResourceDefinition>): api.RequirementStatus[] {
  const described = [...(csv.spec.customresourcedefinitions?.owned ?? []), ...(csv.spec.customresourcedefinitions?.required ?? [])];
  return described.map((d) => {
    const crd = crds.get(d.name);
    const base = { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', name: d.name };
    if (!crd) return { ...base, status: 'NotPresent', message: 'CRD is not present' };
    if (!isCrdEstablished(crd)) return { ...base, status: 'NotPresent', message: 'CRD is present but not Established yet' };
    if (!(crd.spec.versions ?? []).some((v) => v.name === d.version && v.served)) return { ...base, status: 'PresentNotSatisfied', message: `CRD does not serve version ${d.version}` };
    return { ...base, status: 'Present', message: 'CRD is present and Established condition is true', uuid: crd.metadata.uid };
  });
}

export function csvController(ctx: OlmContext): Controller {
  const csvs = ctx.informer(resources.clusterServiceVersions);
  const groups = ctx.informer(resources.operatorGroups);
  const crds = ctx.informer(resources.customResourceDefinitions);
  const deployments = ctx.informer(resources.deployments);
  const subs = ctx.informer(resources.subscriptions);
  const controller = new Controller({ name: 'csv-controller', clock: ctx.clock, sync });
  /** The Subscription that installed a CSV: the one at it, else the one of its package. */
  const subscriptionOf = (csv: api.ClusterServiceVersion) => {
    const inNamespace = subs.list().filter((s) => s.metadata.namespace === csv.metadata.namespace);
    return inNamespace.find((s) => s.status?.installedCSV === csv.metadata.name || s.status?.currentCSV === csv.metadata.name)
      ?? inNamespace.find((s) => csv.metadata.labels?.[packageLabel(s.spec.name, csv.metadata.namespace ?? '')] !== undefined);
  };
  const keysIn = (namespace: string | undefined, filter: (c: api.ClusterServiceVersion) => boolean = () => true) =>
    csvs.list().filter((c) => c.metadata.namespace === namespace && filter(c)).map((c) => `${c.metadata.namespace}/${c.metadata.name}`);
  controller.watch(csvs);
  // The CSV it replaces learns it is being replaced.
  controller.watch(csvs, (c) => (c.spec.replaces ? `${c.metadata.namespace}/${c.spec.replaces}` : undefined));
  controller.watch(groups, (g) => keysIn(g.metadata.namespace));
  controller.watch(crds, (crd) => csvs.list().filter((c) => [...(c.spec.customresourcedefinitions?.owned ?? []), ...(c.spec.customresourcedefinitions?.required ?? [])].some((d) => d.name === crd.metadata.name)).map((c) => `${c.metadata.namespace}/${c.metadata.name}`));
  // Its config (spec.config) goes into the CSV's Deployments.
  controller.watch(subs, (s) => [s.status?.installedCSV, s.status?.currentCSV].filter((n): n is string => Boolean(n)).map((n) => `${s.metadata.namespace}/${n}`));
  controller.watch(deployments, (d) => (d.metadata.ownerReferences ?? []).filter((r) => r.kind === 'ClusterServiceVersion').map((r) => `${d.metadata.namespace}/${r.name}`));
  return controller;

  async function sync(key: string) {
    const [namespace, name] = key.split('/');
    const csv = csvs.get(name, namespace);
    if (!csv) return removeLabelled(namespace, name);
    // A copy in a target namespace (copied-csv-controller.ts) installs nothing.
    if (csv.metadata.deletionTimestamp || csv.metadata.labels?.[COPIED_FROM]) return;
    const inNamespace = groups.list().filter((g) => g.metadata.namespace === namespace);
    const groupProblem = operatorGroupProblem(csv, inNamespace);
    const replacing = csvs.list().find((c) => c.metadata.namespace === namespace && c.spec.replaces === name && !c.metadata.deletionTimestamp && !c.metadata.labels?.[COPIED_FROM]);
    const subscription = subscriptionOf(csv);
    const config = subscriptionConfig(subscription?.spec.config);
    const strategy = csv.spec.install.spec?.deployments ?? [];
    const ours = (d: api.Deployment | undefined) => (d && (d.metadata.ownerReferences ?? []).some((r) => r.uid === csv.metadata.uid) ? d : undefined);
    const observation: CsvObservation = {
      phase: csv.status?.phase ?? '',
      reason: csv.status?.reason,
      replacedBy: replacing && { name: replacing.metadata.name, succeeded: replacing.status?.phase === 'Succeeded' },
      groupProblem,
      requirements: crdRequirements(csv, crds),
      deployments: strategy.map((d) => deploymentHealth(d.name, ours(deployments.get(d.name, namespace)))),
    };
    let decision = nextCsvPhase(observation);
    if (config.problem && !observation.groupProblem && decision.phase !== 'Replacing' && decision.phase !== 'Deleting') {
      decision = { phase: 'Failed', reason: 'InvalidSubscriptionConfig', message: `Subscription ${subscription?.metadata.name}: ${config.problem}`, install: false, remove: false };
    }
    let live = csv;
    if (!groupProblem && !replacing) {
      const group = inNamespace[0];
      const target = { operatorGroup: group.metadata.name, targets: group.status?.namespaces ?? [''] };
      const annotations = groupAnnotations(csv, target);
      if (Object.entries(annotations).some(([k, v]) => csv.metadata.annotations?.[k] !== v)) {
        live = await ctx.client.mergePatch(resources.clusterServiceVersions, name, namespace, { metadata: { annotations, resourceVersion: csv.metadata.resourceVersion } });
      }
      if (decision.install) for (const { resource, object } of strategyObjects(live, target, config.config)) await applyObject(ctx.client, object, resource);
    }
    const now = rfc3339(new Date(ctx.clock.now()));
    const changed = decision.phase !== csv.status?.phase || decision.reason !== csv.status?.reason;
    const history = [...(csv.status?.conditions ?? [])];
    if (changed) history.push({ phase: decision.phase, reason: decision.reason, message: decision.message, lastUpdateTime: now, lastTransitionTime: now });
    const status: api.ClusterServiceVersionStatus = {
      ...csv.status,
      phase: decision.phase,
      reason: decision.reason,
      message: decision.message,
      lastUpdateTime: changed ? now : (csv.status?.lastUpdateTime ?? now),
      lastTransitionTime: changed ? now : (csv.status?.lastTransitionTime ?? now),
      conditions: history.slice(-HISTORY),
      requirementStatus: observation.requirements,
    };
    await writeStatus(ctx.client, resources.clusterServiceVersions, live, status);
    if (decision.remove) await ctx.client.delete(resources.clusterServiceVersions, name, namespace, { propagationPolicy: 'Background' });
  }

  /** Removes what a deleted CSV had outside its namespace or cluster-wide (labelled olm.owner). */
  async function removeLabelled(namespace: string, name: string): Promise<void> {
    const selector = `${OWNER_LABELS.name}=${name},${OWNER_LABELS.namespace}=${namespace}`;
    const kinds: ResourceDefinition<api.KubeObject>[] = [resources.clusterRoleBindings, resources.clusterRoles, resources.roleBindings, resources.roles];
    for (const resource of kinds) {
      const list = await ctx.client.list(resource, undefined, { labelSelector: selector });
      for (const o of list.items) await ctx.client.delete(resource, o.metadata.name, o.metadata.namespace);
    }
  }
}
