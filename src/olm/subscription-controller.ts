// The catalog operator's Subscription controller: resolves each Subscription against its catalog
// and makes the InstallPlans that install and upgrade its package. Each sync reads the world afresh:
//
//   1. The catalog: its CatalogSource missing or not READY → CatalogSourcesUnhealthy=True (the
//      source and why), nothing else done; otherwise CatalogSourcesUnhealthy=False.
//   2. The plan in flight (status.installPlanRef): RequiresApproval or Installing → state
//      UpgradePending, InstallPlanPending=True with the plan's phase as reason; Failed → state
//      UpgradeFailed, InstallPlanFailed=True with the plan's message; Complete → installedCSV is
//      the plan's CSV.
//   3. Resolution (resolve.ts): nothing installed → the channel head or startingCSV; installed →
//      the next bundle along the channel, looked for once the installed CSV has Succeeded (so an
//      upgrade goes one replaces step at a time); none → state AtLatestKnown. A package, channel,
//      bundle or requirement that cannot be found → ResolutionFailed=True naming it.
//   4. A new InstallPlan (install-xxxxx, owned by the Subscription) with the target and its
//      dependencies' steps, approval Automatic or Manual. OLM resolves a namespace's Subscriptions
//      together, so one Manual Subscription makes every plan of the namespace Manual; bosun keeps
//      that behaviour (clusters rely on it) but says so on each Automatic Subscription it affects
//      (NamespaceManualApproval=True naming the Manual ones) instead of surprising the admin.
import type * as api from '../api/index.js';
import { type Condition, Controller, resources, rfc3339 } from '../kube/index.js';
import type { CatalogContext } from './catalogs.js';
import { OLM_GROUP } from './context.js';
import { COPIED_FROM } from './copied-csv-controller.js';
import type { Gvk } from './fbc.js';
import { PROPERTIES_ANNOTATION, packageLabel, planCsvNames, planSteps, uninstallable } from './install-plan.js';
import { type CatalogRef, type Installed, type Resolved, ResolutionError, dependencies, nextUpgrade, resolveInitial, subscribedChannel } from './resolve.js';
import { type ConditionUpdate, withCondition, writeStatus } from './status.js';

/** What an installed CSV's properties annotation says it is and provides. */
export function installedOf(csvs: readonly api.ClusterServiceVersion[]): Installed {
  const installed: Installed = { apis: [], packages: [] };
  for (const csv of csvs) {
    let properties: { type?: string; value?: Record<string, unknown> }[] = [];
    try {
      properties = (JSON.parse(csv.metadata.annotations?.[PROPERTIES_ANNOTATION] ?? '{}') as { properties?: typeof properties }).properties ?? [];
    } catch {
      properties = [];
    }
    for (const p of properties) {
      if (p.type === 'olm.package' && typeof p.value?.packageName === 'string') installed.packages.push({ packageName: p.value.packageName, version: String(p.value.version ?? '') });
      if (p.type === 'olm.gvk' && p.value) installed.apis.push(p.value as unknown as Gvk);
    }
    for (const owned of csv.spec.customresourcedefinitions?.owned ?? []) installed.apis.push({ group: owned.name.split('.').slice(1).join('.'), version: owned.version, kind: owned.kind });
  }
  return installed;
}

const IN_FLIGHT = new Set(['', 'Planning', 'RequiresApproval', 'Installing']);

export function subscriptionController(ctx: CatalogContext): Controller {
  const subs = ctx.informer(resources.subscriptions);
  const sources = ctx.informer(resources.catalogSources);
  const configMaps = ctx.informer(resources.configMaps);
  const plans = ctx.informer(resources.installPlans);
  const csvs = ctx.informer(resources.clusterServiceVersions);
  /** Plans this process created, by Subscription uid and CSV: the caches may not show them yet. */
  const created = new Map<string, string>();
  const controller = new Controller({ name: 'subscription-controller', clock: ctx.clock, sync });
  const keysOf = (list: api.Subscription[]) => list.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
  controller.watch(subs);
  controller.watch(subs, (s) => keysOf(subs.list().filter((o) => o.metadata.namespace === s.metadata.namespace && o.metadata.name !== s.metadata.name)));
  controller.watch(sources, (c) => keysOf(subs.list().filter((s) => s.spec.source === c.metadata.name && s.spec.sourceNamespace === c.metadata.namespace)));
  controller.watch(configMaps, (cm) => {
    const using = sources.list().filter((c) => c.metadata.namespace === cm.metadata.namespace && c.spec.configMap === cm.metadata.name);
    return keysOf(subs.list().filter((s) => using.some((c) => s.spec.source === c.metadata.name && s.spec.sourceNamespace === c.metadata.namespace)));
  });
  controller.watch(plans, (p) => (p.metadata.ownerReferences ?? []).filter((r) => r.kind === 'Subscription').map((r) => `${p.metadata.namespace}/${r.name}`));
  controller.watch(csvs, (c) => keysOf(subs.list().filter((s) => s.metadata.namespace === c.metadata.namespace && (s.status?.installedCSV === c.metadata.name || s.status?.currentCSV === c.metadata.name))));
  return controller;

  /** Every READY catalog, for dependencies. */
  function readyCatalogs(): CatalogRef[] {
    return sources.list().flatMap((c) => {
      const state = ctx.catalogs.state(c, (cm) => configMaps.get(cm, c.metadata.namespace));
      return state.ready ? [{ name: c.metadata.name, namespace: c.metadata.namespace!, catalog: state.catalog, priority: c.spec.priority }] : [];
    });
  }

  async function sync(key: string) {
    const [namespace, name] = key.split('/');
    const sub = subs.get(name, namespace);
    if (!sub) return;
    const now = new Date(ctx.clock.now());
    let conditions: Condition[] = [...(sub.status?.conditions ?? [])];
    const set = (type: string, update: ConditionUpdate | undefined) => (conditions = withCondition(conditions, type, update, now));
    const status: api.SubscriptionStatus = { ...sub.status, lastUpdated: sub.status?.lastUpdated ?? rfc3339(now) };
    const write = async () => {
      status.conditions = conditions as api.SubscriptionStatus['conditions'];
      await writeStatus(ctx.client, resources.subscriptions, sub, { ...status, lastUpdated: rfc3339(now) });
    };

    // 1. The catalog.
    const source = sources.get(sub.spec.source, sub.spec.sourceNamespace);
    const state = source && ctx.catalogs.state(source, (cm) => configMaps.get(cm, sub.spec.sourceNamespace));
    const sourceName = `${sub.spec.sourceNamespace}/${sub.spec.source}`;
    status.catalogHealth = [{
      catalogSourceRef: { apiVersion: `${OLM_GROUP}/v1alpha1`, kind: 'CatalogSource', name: sub.spec.source, namespace: sub.spec.sourceNamespace, ...(source?.metadata.uid ? { uid: source.metadata.uid } : {}) },
      healthy: Boolean(state?.ready),
      lastUpdated: sub.status?.catalogHealth?.[0]?.healthy === Boolean(state?.ready) ? sub.status.catalogHealth[0].lastUpdated : rfc3339(now),
    }];
    if (!source || !state || !state.ready) {
      set('CatalogSourcesUnhealthy', { status: 'True', reason: 'UnhealthyCatalogSourceFound', message: source ? `catalog source ${sourceName} is not healthy: ${state && !state.ready ? state.message : ''}` : `catalog source ${sourceName} not found` });
      return write();
    }
    set('CatalogSourcesUnhealthy', { status: 'False', reason: 'AllCatalogSourcesHealthy', message: 'all available catalogsources are healthy' });
    const catalog: CatalogRef = { name: source.metadata.name, namespace: source.metadata.namespace!, catalog: state.catalog, priority: source.spec.priority };

    // 2. The plan in flight.
    const plan = status.installPlanRef?.name ? plans.get(status.installPlanRef.name, namespace) : undefined;
    const planPhase = plan?.status?.phase ?? '';
    if (plan && IN_FLIGHT.has(planPhase)) {
      status.state = 'UpgradePending';
      set('InstallPlanPending', { status: 'True', reason: planPhase || 'Planning', message: planPhase === 'RequiresApproval' ? `InstallPlan ${plan.metadata.name} waits for approval: kubectl patch installplan ${plan.metadata.name} -n ${namespace} --type merge -p '{"spec":{"approved":true}}'` : `InstallPlan ${plan.metadata.name} is ${planPhase || 'being planned'}` });
      return write();
    }
    set('InstallPlanPending', undefined);
    if (plan && planPhase === 'Failed') {
      status.state = 'UpgradeFailed';
      set('InstallPlanFailed', { status: 'True', reason: 'InstallComponentFailed', message: `InstallPlan ${plan.metadata.name} failed: ${plan.status?.message ?? ''}` });
      return write();
    }
    set('InstallPlanFailed', undefined);
    if (plan && planPhase === 'Complete' && status.currentCSV) status.installedCSV = status.currentCSV;

    // 3. Resolution.
    let target: Resolved;
    let deps: Resolved[];
    try {
      const installedName = status.installedCSV;
      if (!installedName) target = resolveInitial(catalog, sub.spec.name, sub.spec.channel, sub.spec.startingCSV);
      else {
        const installed = csvs.get(installedName, namespace);
        const { pkg, channel } = subscribedChannel(catalog, sub.spec.name, sub.spec.channel);
        const next = nextUpgrade(pkg, channel, { name: installedName, version: installed?.spec.version });
        set('ResolutionFailed', undefined);
        if (!next) {
          status.state = 'AtLatestKnown';
          status.currentCSV = installedName;
          return write();
        }
        if (installed?.status?.phase !== 'Succeeded') {
          // Upgrade once the installed version runs: one step at a time.
          status.state = 'UpgradeAvailable';
          status.currentCSV = installedName;
          return write();
        }
        target = { source: catalog, pkg, channel, bundle: next };
      }
      const problem = uninstallable(target);
      if (problem) throw new ResolutionError(problem);
      deps = dependencies(target, [catalog, ...readyCatalogs()], installedOf(csvs.list().filter((c) => c.metadata.namespace === namespace && c.metadata.name !== status.installedCSV && !c.metadata.labels?.[COPIED_FROM])));
      for (const d of deps) {
        const why = uninstallable(d);
        if (why) throw new ResolutionError(why);
      }
    } catch (e) {
      if (!(e instanceof ResolutionError)) throw e;
      set('ResolutionFailed', { status: 'True', reason: 'ConstraintsNotSatisfiable', message: `subscription ${name} (package "${sub.spec.name}", channel "${sub.spec.channel || 'default'}"): ${e.message}` });
      return write();
    }
    set('ResolutionFailed', undefined);

    // 4. The plan.
    const resolved = [target, ...deps];
    const csvNames = planCsvNames(resolved);
    const manual = subs.list().filter((s) => s.metadata.namespace === namespace && s.metadata.name !== name && s.spec.installPlanApproval === 'Manual').map((s) => s.metadata.name).sort();
    const approval = sub.spec.installPlanApproval === 'Manual' || manual.length > 0 ? 'Manual' : 'Automatic';
    set('NamespaceManualApproval', sub.spec.installPlanApproval !== 'Manual' && manual.length > 0
      ? { status: 'True', reason: 'ManualSubscriptionInNamespace', message: `Subscription${manual.length > 1 ? 's' : ''} ${manual.join(', ')} in namespace ${namespace} ${manual.length > 1 ? 'are' : 'is'} Manual: OLM resolves a namespace's Subscriptions together, so this Subscription's InstallPlans need approval too although its installPlanApproval is Automatic` }
      : undefined);
    const planKey = `${sub.metadata.uid}/${csvNames[0]}`;
    let made = plans.list().find((p) => p.metadata.namespace === namespace && p.spec.clusterServiceVersionNames[0] === csvNames[0] && p.status?.phase !== 'Failed' && (p.metadata.ownerReferences ?? []).some((r) => r.uid === sub.metadata.uid));
    const known = created.get(planKey);
    if (!made && known) made = await ctx.client.read(resources.installPlans, known, namespace);
    if (!made) {
      const generation = (status.installPlanGeneration ?? 0) + 1;
      const fresh = await ctx.client.create(resources.installPlans, {
        apiVersion: `${OLM_GROUP}/v1alpha1`,
        kind: 'InstallPlan',
        metadata: {
          name: '',
          generateName: 'install-',
          namespace,
          labels: { [packageLabel(sub.spec.name, namespace)]: '' },
          ownerReferences: [{ apiVersion: `${OLM_GROUP}/v1alpha1`, kind: 'Subscription', name, uid: sub.metadata.uid ?? '', blockOwnerDeletion: false, controller: false }],
        },
        spec: { clusterServiceVersionNames: csvNames, approval, approved: approval === 'Automatic', source: catalog.name, sourceNamespace: catalog.namespace, generation },
      });
      created.set(planKey, fresh.metadata.name);
      const steps = planSteps(resolved, namespace, approval, status.installedCSV);
      await ctx.client.update(resources.installPlans, { ...fresh, status: { phase: approval === 'Automatic' ? 'Installing' : 'RequiresApproval', catalogSources: [...new Set(resolved.map((r) => r.source.name))], plan: steps, startTime: rfc3339(now) } }, 'status');
      made = fresh;
      status.installPlanGeneration = generation;
    }
    status.currentCSV = csvNames[0];
    status.state = 'UpgradePending';
    status.installPlanRef = { apiVersion: `${OLM_GROUP}/v1alpha1`, kind: 'InstallPlan', name: made.metadata.name, namespace, resourceVersion: made.metadata.resourceVersion, uid: made.metadata.uid };
    status.installplan = { apiVersion: `${OLM_GROUP}/v1alpha1`, kind: 'InstallPlan', name: made.metadata.name, uuid: made.metadata.uid };
    set('InstallPlanPending', { status: 'True', reason: approval === 'Manual' ? 'RequiresApproval' : 'Installing', message: approval === 'Manual' ? `InstallPlan ${made.metadata.name} waits for approval: kubectl patch installplan ${made.metadata.name} -n ${namespace} --type merge -p '{"spec":{"approved":true}}'` : `InstallPlan ${made.metadata.name} is Installing` });
    return write();
  }
}
