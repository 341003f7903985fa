// The OLM operator's OperatorGroup controller: status.namespaces is what the group's operators
// serve — spec.targetNamespaces (sorted) when given, else the namespaces spec.selector selects,
// else [""], all namespaces — as OLM writes it. Namespaces are watched, so a labelled namespace
// joins a selector's group. The group's olm.providedAPIs annotation names the APIs its namespace's
// CSVs own (Kind.version.group), as OLM writes it.
import type * as api from '../api/index.js';
import { storedSelectorMatches } from '../common/label-selectors.js';
import { Controller, resources, rfc3339 } from '../kube/index.js';
import type { OlmContext } from './context.js';
import { COPIED_FROM } from './copied-csv-controller.js';
import { writeStatus } from './status.js';

/** The namespaces an OperatorGroup targets ([""]: all). Pure. */
export function targetNamespaces(group: api.OperatorGroup, namespaces: readonly api.Namespace[]): string[] {
  const targets = group.spec?.targetNamespaces?.filter(Boolean);
  if (targets && targets.length > 0) return [...new Set(targets)].sort();
  const selector = group.spec?.selector;
  if (selector && (Object.keys(selector.matchLabels ?? {}).length > 0 || (selector.matchExpressions ?? []).length > 0)) {
    return namespaces.filter((ns) => storedSelectorMatches(selector, ns.metadata.labels)).map((ns) => ns.metadata.name).sort();
  }
  return [''];
}

/** The annotation naming the APIs the group's operators provide (OLM's): Kind.version.group, sorted, comma-separated. */
export const PROVIDED_APIS = 'olm.providedAPIs';

/** What the CSVs installed in a group's namespace provide (their owned CRDs), as OLM writes it. Pure. */
export function providedApis(csvs: readonly api.ClusterServiceVersion[]): string {
  const apis = new Set<string>();
  for (const csv of csvs) {
    if (csv.metadata.labels?.[COPIED_FROM] || csv.metadata.deletionTimestamp || csv.status?.phase === 'Deleting') continue;
    for (const owned of csv.spec.customresourcedefinitions?.owned ?? []) {
      const group = owned.name.split('.').slice(1).join('.');
      apis.add(`${owned.kind}.${owned.version}.${group}`);
    }
  }
  return [...apis].sort().join(',');
}

export function operatorGroupController(ctx: OlmContext): Controller {
  const groups = ctx.informer(resources.operatorGroups);
  const namespaces = ctx.informer(resources.namespaces);
  const csvs = ctx.informer(resources.clusterServiceVersions);
  const controller = new Controller({ name: 'operator-group-controller', clock: ctx.clock, sync });
  controller.watch(groups);
  controller.watch(csvs, (c) => (c.metadata.labels?.[COPIED_FROM] ? undefined : groups.list().filter((g) => g.metadata.namespace === c.metadata.namespace).map((g) => `${g.metadata.namespace}/${g.metadata.name}`)));
  controller.watch(namespaces, () => groups.list().filter((g) => g.spec?.selector).map((g) => `${g.metadata.namespace}/${g.metadata.name}`));
  return controller;

  async function sync(key: string) {
    const [namespace, name] = key.split('/');
    const group = groups.get(name, namespace);
    if (!group) return;
    const provided = providedApis(csvs.list().filter((c) => c.metadata.namespace === namespace));
    if ((group.metadata.annotations?.[PROVIDED_APIS] ?? '') !== provided) {
      // A merge patch: a null removes the annotation once nothing provides an API.
      await ctx.client.mergePatch(resources.operatorGroups, name, namespace, { metadata: { annotations: { [PROVIDED_APIS]: provided || null } } });
      return; // the write brings the group back with its new resourceVersion
    }
    const status: api.OperatorGroupStatus = { ...group.status, namespaces: targetNamespaces(group, namespaces.list()), lastUpdated: group.status?.lastUpdated ?? rfc3339(new Date(ctx.clock.now())) };
    if (group.status?.namespaces && JSON.stringify(group.status.namespaces) !== JSON.stringify(status.namespaces)) status.lastUpdated = rfc3339(new Date(ctx.clock.now()));
    await writeStatus(ctx.client, resources.operatorGroups, group, status);
  }
}
