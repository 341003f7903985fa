// The OLM operator's OperatorGroup controller: status.namespaces is what the group's operators
// serve — spec.targetNamespaces (sorted) when given, else the namespaces spec.selector selects,
// else [""], all namespaces — as OLM writes it. Namespaces are watched, so a labelled namespace
// joins a selector's group.
import type * as api from '../api/index.js';
import { storedSelectorMatches } from '../common/label-selectors.js';
import { Controller, resources, rfc3339 } from '../kube/index.js';
import type { OlmContext } from './context.js';
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

export function operatorGroupController(ctx: OlmContext): Controller {
  const groups = ctx.informer(resources.operatorGroups);
  const namespaces = ctx.informer(resources.namespaces);
  const controller = new Controller({ name: 'operator-group-controller', clock: ctx.clock, sync });
  controller.watch(groups);
  controller.watch(namespaces, () => groups.list().filter((g) => g.spec?.selector).map((g) => `${g.metadata.namespace}/${g.metadata.name}`));
  return controller;

  async function sync(key: string) {
    const [namespace, name] = key.split('/');
    const group = groups.get(name, namespace);
    if (!group) return;
    const status: api.OperatorGroupStatus = { ...group.status, namespaces: targetNamespaces(group, namespaces.list()), lastUpdated: group.status?.lastUpdated ?? rfc3339(new Date(ctx.clock.now())) };
    if (group.status?.namespaces && JSON.stringify(group.status.namespaces) !== JSON.stringify(status.namespaces)) status.lastUpdated = rfc3339(new Date(ctx.clock.now()));
    await writeStatus(ctx.client, resources.operatorGroups, group, status);
  }
}
