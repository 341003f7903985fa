// The OLM operator's copied CSVs: a CSV whose OperatorGroup targets other namespaces than its own
// (SingleNamespace, MultiNamespace, or every namespace for AllNamespaces) is copied into each of
// them, as OLM copies it, so that `kubectl get csv -n TARGET` shows which operators manage that
// namespace. A copy carries the label olm.copiedFrom=<the operator's namespace>, the original's
// spec and annotations, and a status mirroring the original's phase with reason Copied. Copies
// install nothing (the CSV controller skips them); they go away with the original, or when their
// namespace stops being a target, or when a Subscription there installs a CSV of that name itself.
// Keys are the originals' namespace/name.
import type * as api from '../api/index.js';
import { jsonEqual } from '../common/json.js';
import { Controller, isAlreadyExists, isNotFound, resources } from '../kube/index.js';
import type { OlmContext } from './context.js';

export const COPIED_FROM = 'olm.copiedFrom';

/** The namespaces a CSV is copied into, given its group's targets ([""]: all) and the cluster's namespaces. Pure. */
export function copyTargets(csvNamespace: string, targets: readonly string[], namespaces: readonly api.Namespace[]): string[] {
  const live = namespaces.filter((n) => !n.metadata.deletionTimestamp).map((n) => n.metadata.name);
  const all = targets.length === 1 && targets[0] === '';
  return (all ? live : targets.filter((t) => live.includes(t))).filter((n) => n !== csvNamespace).sort();
}

/** The copy of `csv` in `namespace` (status apart). Pure. */
export function copiedCsv(csv: api.ClusterServiceVersion, namespace: string): api.ClusterServiceVersion {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: csv.metadata.name, namespace, labels: { ...csv.metadata.labels, [COPIED_FROM]: csv.metadata.namespace ?? '' }, annotations: { ...csv.metadata.annotations } },
    spec: csv.spec,
  };
}

/** The copy's status: the original's phase, reason Copied. Pure. */
export function copiedStatus(csv: api.ClusterServiceVersion): api.ClusterServiceVersionStatus {
  const s = csv.status ?? {};
  return {
    phase: s.phase ?? 'Pending',
    reason: 'Copied',
    message: `The operator is running in ${csv.metadata.namespace} but is managing this namespace`,
    ...(s.lastUpdateTime ? { lastUpdateTime: s.lastUpdateTime } : {}),
    ...(s.lastTransitionTime ? { lastTransitionTime: s.lastTransitionTime } : {}),
  };
}

export function copiedCsvController(ctx: OlmContext): Controller {
  const csvs = ctx.informer(resources.clusterServiceVersions);
  const groups = ctx.informer(resources.operatorGroups);
  const namespaces = ctx.informer(resources.namespaces);
  const subs = ctx.informer(resources.subscriptions);
  const controller = new Controller({ name: 'copied-csv-controller', clock: ctx.clock, sync });
  /** Namespaces where a Subscription installs a CSV of this name itself: no copy goes there. */
  const installedThere = (name: string) => new Set(subs.list().filter((s) => s.status?.currentCSV === name || s.status?.installedCSV === name).map((s) => s.metadata.namespace ?? ''));
  const originals = () => csvs.list().filter((c) => !c.metadata.labels?.[COPIED_FROM]);
  const keyOf = (c: api.ClusterServiceVersion) => `${c.metadata.namespace}/${c.metadata.name}`;
  controller.watch(csvs, (c) => {
    const from = c.metadata.labels?.[COPIED_FROM];
    return from ? `${from}/${c.metadata.name}` : keyOf(c);
  });
  controller.watch(subs, (sub) => originals().filter((c) => c.metadata.name === sub.status?.currentCSV || c.metadata.name === sub.status?.installedCSV).map(keyOf));
  controller.watch(groups, (g) => originals().filter((c) => c.metadata.namespace === g.metadata.namespace).map(keyOf));
  // A new namespace gets the copies of every all-namespaces operator; a deleted one loses them.
  controller.watch(namespaces, () => originals().filter((c) => c.metadata.annotations?.['olm.targetNamespaces'] !== c.metadata.namespace).map(keyOf));
  return controller;

  async function sync(key: string) {
    const [namespace, name] = key.split('/');
    const csv = csvs.get(name, namespace);
    const copies = csvs.list().filter((c) => c.metadata.name === name && c.metadata.labels?.[COPIED_FROM] === namespace);
    const inNamespace = groups.list().filter((g) => g.metadata.namespace === namespace);
    const group = inNamespace.length === 1 ? inNamespace[0] : undefined;
    const copying = csv && !csv.metadata.deletionTimestamp && !csv.metadata.labels?.[COPIED_FROM] && group?.status?.namespaces && !['Deleting'].includes(csv.status?.phase ?? '');
    const own = installedThere(name);
    const wanted = copying ? copyTargets(namespace, group.status!.namespaces!, namespaces.list()).filter((t) => !own.has(t)) : [];
    for (const copy of copies) {
      if (wanted.includes(copy.metadata.namespace ?? '')) continue;
      await ctx.client.delete(resources.clusterServiceVersions, name, copy.metadata.namespace).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    }
    if (!csv || !copying) return;
    for (const target of wanted) {
      const desired = copiedCsv(csv, target);
      let live = copies.find((c) => c.metadata.namespace === target);
      if (!live) {
        try {
          live = await ctx.client.create(resources.clusterServiceVersions, desired);
        } catch (e) {
          // A CSV of the same name that is not a copy (installed there by its own Subscription) is left alone.
          if (isAlreadyExists(e)) continue;
          if (isNotFound(e)) continue; // the namespace went away
          throw e;
        }
      } else if (!jsonEqual(live.spec, desired.spec) || !jsonEqual(live.metadata.labels, desired.metadata.labels) || !jsonEqual(live.metadata.annotations, desired.metadata.annotations)) {
        live = await ctx.client.update(resources.clusterServiceVersions, { ...live, metadata: { ...live.metadata, labels: desired.metadata.labels, annotations: desired.metadata.annotations }, spec: desired.spec });
      }
      const status = copiedStatus(csv);
      if (!jsonEqual(status, live.status ?? {})) {
        await ctx.client.update(resources.clusterServiceVersions, { ...live, status }, 'status').catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
      }
    }
  }
}
