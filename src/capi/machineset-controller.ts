// The MachineSet controller (Cluster API's machineset controller): keeps `spec.replicas` Machines
// of its template. A new Machine is named `<set>-<random>`; its infrastructure machine is cloned
// first from the template spec.template.spec.infrastructureRef names (a LocalMachineTemplate
// gives a LocalMachine of the same name as the Machine), and so is its bootstrap config from the
// template spec.template.spec.bootstrap.configRef names (a KubeadmConfigTemplate gives a
// KubeadmConfig), then the Machine is created, owned by the set and pointing at the clones. A
// missing template blocks the scale-up with ScalingUp's message naming it, and nothing is created. Too many: machinesToDelete picks whom (machineset-scaling.ts). Machines a
// MachineHealthCheck handed over (OwnerRemediated=False) are deleted, their replacements made in
// the same pass. Machines being deleted do not count, so a replacement boots while the old one
// drains. Creations and deletions the cache has not shown yet are remembered (expectations), so
// two passes never create twice. Status: replicas, ready, available and up-to-date counts, the
// selector (for the scale subresource) and the ScalingUp/ScalingDown conditions.
import { randomInt } from 'node:crypto';
import type * as api from '../api/index.js';
import { Controller, CountExpectations, TerminalError, controllerOf, controllerReference, enqueueOwner, isNotFound } from '../kube/index.js';
import { formatLabelSelector, fromLabelSelectorObject, storedSelectorMatches } from '../common/label-selectors.js';
import { ANNOTATION, API_VERSION, CONDITION, GROUP, type InfraMachineTemplate, LABEL, MACHINES, MACHINE_SETS, conditionIs, desiredReplicas, eventTarget, isDeleting, machineCondition, setCapiCondition } from './api.js';
import { type CapiContext, type ContractRef, informers, onUnpause, pausedCheck } from './context.js';
import { machinesToDelete, machinesToRemediate, remediationBudget } from './machineset-scaling.js';
import { sameStatus } from './machine-status.js';
import { isMachineReady } from '../kube/readiness.js';

/** How often a MachineSet whose template is missing looks for it again. */
const TEMPLATE_POLL_MS = 10_000;

/** A template of a provider object (InfraMachineTemplate, KubeadmConfigTemplate): spec.template is what is cloned. */
type MachineTemplate = InfraMachineTemplate;

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const randomSuffix = () => Array.from({ length: 5 }, () => SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)]).join('');

export function machineSetController(ctx: CapiContext): Controller {
  const inf = informers(ctx);
  const paused = pausedCheck(ctx);
  const sets = inf.machineSets();
  const machines = inf.machines();
  const events = ctx.events('machineset-controller');
  const expectations = new CountExpectations(5 * 60_000, ctx.clock);

  const ownedBy = (set: api.MachineSet) => machines.list().filter((m) => m.metadata.namespace === set.metadata.namespace && controllerOf(m)?.uid === set.metadata.uid);

  /**
   * The templates a new Machine is cloned from: spec.template.spec.infrastructureRef's and, when
   * set, spec.template.spec.bootstrap.configRef's (a KubeadmConfigTemplate). A missing one is named
   * in `missing`, so that nothing is created until every template is there.
   */
  async function readTemplates(set: api.MachineSet): Promise<{ templates: { ref: ContractRef; template: MachineTemplate }[] } | { missing: string }> {
    const refs: [ContractRef, string][] = [[set.spec.template.spec.infrastructureRef, 'spec.template.spec.infrastructureRef']];
    const configRef = set.spec.template.spec.bootstrap?.configRef;
    if (configRef?.name) refs.push([configRef, 'spec.template.spec.bootstrap.configRef']);
    const templates: { ref: ContractRef; template: MachineTemplate }[] = [];
    for (const [ref, field] of refs) {
      const what = `${ref.kind} ${set.metadata.namespace}/${ref.name} (${field})`;
      let template: MachineTemplate | undefined;
      try {
        template = await ctx.client.read(await ctx.resolve<MachineTemplate>(ref), ref.name, set.metadata.namespace);
      } catch (e) {
        return { missing: `${what} cannot be read: ${(e as Error).message}` };
      }
      if (!template) return { missing: `${what} does not exist` };
      templates.push({ ref, template });
    }
    return { templates };
  }

  /**
   * Clones a template's spec.template into an object named `name` of the template's kind without
   * "Template" (a LocalMachineTemplate gives a LocalMachine, a KubeadmConfigTemplate a
   * KubeadmConfig), as Cluster API's external.CreateFromTemplate does: the template's labels and
   * annotations, the Machine's labels, the cloned-from annotations, and the MachineSet as its
   * controller until the Machine controller makes the Machine its controller — so a clone whose
   * Machine never came goes with the set. Returns its reference.
   */
  async function cloneFromTemplate(set: api.MachineSet, templateRef: ContractRef, template: MachineTemplate, name: string, labels: Record<string, string>): Promise<ContractRef> {
    const kind = String(templateRef.kind).replace(/Template$/, '');
    const resource = await ctx.resolve({ apiGroup: templateRef.apiGroup, kind });
    await ctx.client.create(resource, {
      apiVersion: template.apiVersion,
      kind,
      metadata: {
        name,
        namespace: set.metadata.namespace,
        labels: { ...(template.spec?.template?.metadata?.labels ?? {}), ...labels },
        annotations: { ...(template.spec?.template?.metadata?.annotations ?? {}), [ANNOTATION.clonedFromName]: templateRef.name, [ANNOTATION.clonedFromGroupKind]: `${templateRef.kind}.${templateRef.apiGroup}` },
        ownerReferences: [controllerReference({ apiVersion: API_VERSION, kind: 'MachineSet', ...set })],
      },
      spec: structuredClone(template.spec?.template?.spec ?? {}),
    });
    return { apiGroup: templateRef.apiGroup, kind, name };
  }

  async function createMachine(set: api.MachineSet, templates: { ref: ContractRef; template: MachineTemplate }[]): Promise<void> {
    const template = set.spec.template;
    const name = `${set.metadata.name}-${randomSuffix()}`;
    const labels: Record<string, string> = {
      ...(template.metadata?.labels ?? {}),
      [LABEL.setName]: set.metadata.name,
      [LABEL.clusterName]: set.spec.clusterName,
      ...(set.metadata.labels?.[LABEL.deploymentName] ? { [LABEL.deploymentName]: set.metadata.labels[LABEL.deploymentName] } : {}),
    };
    const clones: ContractRef[] = [];
    try {
      for (const t of templates) clones.push(await cloneFromTemplate(set, t.ref, t.template, name, labels));
      const [infrastructureRef, configRef] = clones;
      await ctx.client.create(MACHINES, {
        apiVersion: API_VERSION,
        kind: 'Machine',
        metadata: { name, namespace: set.metadata.namespace, labels, annotations: { ...(template.metadata?.annotations ?? {}) }, ownerReferences: [controllerReference({ apiVersion: API_VERSION, kind: 'MachineSet', ...set })] },
        spec: {
          ...structuredClone(template.spec), clusterName: set.spec.clusterName, infrastructureRef,
          ...(configRef ? { bootstrap: { ...template.spec.bootstrap, configRef } } : {}),
        },
      });
    } catch (e) {
      // No Machine: no orphan clones either.
      for (const ref of clones) await ctx.client.delete(await ctx.resolve(ref), name, set.metadata.namespace).catch(() => undefined);
      throw e;
    }
  }

  async function writeStatus(set: api.MachineSet, active: api.Machine[], scaling: { up: string; down: string }): Promise<void> {
    const now = new Date(ctx.clock.now());
    const desired = desiredReplicas(set);
    const count = (type: string) => active.filter((m) => conditionIs(m, type, 'True')).length;
    const upToDate = active.filter((m) => !conditionIs(m, CONDITION.upToDate, 'False')).length;
    let conditions = set.status?.conditions ?? [];
    conditions = setCapiCondition(conditions, active.length < desired
      ? { type: CONDITION.scalingUp, status: 'True', reason: 'ScalingUp', message: scaling.up || `Scaling up from ${active.length} to ${desired} replicas` }
      : { type: CONDITION.scalingUp, status: 'False', reason: 'NotScalingUp', message: '' }, now);
    conditions = setCapiCondition(conditions, active.length > desired
      ? { type: CONDITION.scalingDown, status: 'True', reason: 'ScalingDown', message: scaling.down || `Scaling down from ${active.length} to ${desired} replicas` }
      : { type: CONDITION.scalingDown, status: 'False', reason: 'NotScalingDown', message: '' }, now);
    const notReady = active.filter((m) => !isMachineReady(m)).map((m) => m.metadata.name);
    conditions = setCapiCondition(conditions, active.length === 0
      ? { type: CONDITION.machinesReady, status: 'True', reason: 'NoReplicas', message: '' }
      : notReady.length ? { type: CONDITION.machinesReady, status: 'False', reason: 'NotReady', message: `Machines ${notReady.join(', ')} are not Ready` } : { type: CONDITION.machinesReady, status: 'True', reason: 'Ready', message: '' }, now);
    const status = {
      ...(set.status ?? {}),
      selector: formatLabelSelector(fromLabelSelectorObject(set.spec.selector)),
      replicas: active.length,
      readyReplicas: count(CONDITION.ready),
      availableReplicas: count(CONDITION.available),
      upToDateReplicas: upToDate,
      observedGeneration: set.metadata.generation,
      conditions,
    };
    if (!sameStatus(status, set.status)) await ctx.client.update(MACHINE_SETS, { ...set, status }, 'status');
  }

  const controller = new Controller({
    name: 'machineset-controller',
    workers: 2,
    clock: ctx.clock,
    sync: async (key) => {
      const set = sets.getByKey(key);
      if (!set) return void expectations.forget(key);
      if (paused(set)) return;
      if (isDeleting(set)) return; // its Machines go through the garbage collector (owner references)
      const templateLabels = set.spec.template?.metadata?.labels ?? {};
      if (!set.spec.selector || (!Object.keys(set.spec.selector.matchLabels ?? {}).length && !(set.spec.selector.matchExpressions ?? []).length)) {
        throw new TerminalError(`MachineSet ${key}: an empty spec.selector is not valid`);
      }
      if (!storedSelectorMatches(set.spec.selector, templateLabels)) {
        void events.event(eventTarget(set, 'MachineSet'), 'Warning', 'InvalidSelector', 'spec.selector does not match spec.template.metadata.labels');
        throw new TerminalError(`MachineSet ${key}: spec.selector does not match spec.template.metadata.labels`);
      }
      if (!expectations.satisfied(key)) return { requeueAfterMs: 1_000 };
      const owned = ownedBy(set);
      let active = owned.filter((m) => !isDeleting(m));
      const scaling = { up: '', down: '' };

      // Hand-overs from a health check: delete them (within the MachineDeployment's
      // remediation.maxInFlight; the rest wait, RemediationDeferred); replacements follow below.
      const deploymentRef = controllerOf(set);
      const deployment = deploymentRef?.kind === 'MachineDeployment' ? inf.machineDeployments().get(deploymentRef.name, set.metadata.namespace) : undefined;
      const deploymentMachines = deployment ? machines.list().filter((m) => m.metadata.namespace === set.metadata.namespace && m.metadata.labels?.[LABEL.deploymentName] === deployment.metadata.name) : [];
      const candidates = machinesToRemediate(active);
      const budget = remediationBudget(deployment, deploymentMachines);
      const remediate = candidates.slice(0, budget);
      for (const machine of candidates.slice(budget)) {
        const message = `Waiting because there are already too many remediations in progress (spec.remediation.maxInFlight is ${deployment?.spec.remediation?.maxInFlight})`;
        if (machineCondition(machine, CONDITION.ownerRemediated)?.reason === 'RemediationDeferred') continue;
        await ctx.client.update(MACHINES, { ...machine, status: { ...machine.status, conditions: setCapiCondition(machine.status?.conditions, { type: CONDITION.ownerRemediated, status: 'False', reason: 'RemediationDeferred', message }, new Date(ctx.clock.now())) } }, 'status');
      }
      for (const machine of remediate) {
        const now = new Date(ctx.clock.now());
        await ctx.client.update(MACHINES, { ...machine, status: { ...machine.status, conditions: setCapiCondition(machine.status?.conditions, { type: CONDITION.ownerRemediated, status: 'False', reason: 'MachineDeleting', message: 'Machine is deleting' }, now) } }, 'status').catch((e) => {
          if (!isNotFound(e)) throw e;
        });
        await ctx.client.delete(MACHINES, machine.metadata.name, machine.metadata.namespace);
        void events.event(eventTarget(set, 'MachineSet'), 'Normal', 'MachineRemediated', `Deleted unhealthy Machine ${machine.metadata.name} for remediation`);
      }
      active = active.filter((m) => !remediate.includes(m));

      const diff = desiredReplicas(set) - active.length;
      const found = diff > 0 ? await readTemplates(set) : { templates: [] };
      if ('missing' in found) {
        // Bad input, not a failure: say so and look again (the template may come), touching nothing.
        scaling.up = `Scaling up from ${active.length} to ${desiredReplicas(set)} replicas is blocked: ${found.missing}`;
        if (!String(set.status?.conditions?.find((c) => c.type === CONDITION.scalingUp)?.message).includes(found.missing)) {
          void events.event(eventTarget(set, 'MachineSet'), 'Warning', 'TemplateNotFound', found.missing);
        }
        await writeStatus(set, active, scaling);
        return { requeueAfterMs: TEMPLATE_POLL_MS };
      }
      if (diff > 0) {
        expectations.expect(key, diff, 0);
        for (let i = 0; i < diff; i++) {
          try {
            await createMachine(set, found.templates);
          } catch (e) {
            expectations.lowerExpectations(key, diff - i, 0);
            scaling.up = `Failed to create a Machine: ${(e as Error).message}`;
            void events.event(eventTarget(set, 'MachineSet'), 'Warning', 'FailedCreate', scaling.up);
            await writeStatus(set, active, scaling);
            throw e;
          }
        }
        void events.event(eventTarget(set, 'MachineSet'), 'Normal', 'SuccessfulCreate', `Created ${diff} Machine${diff > 1 ? 's' : ''}`);
      } else if (diff < 0) {
        const victims = machinesToDelete(active, -diff, set.spec.deletion?.order ?? 'Random');
        expectations.expect(key, 0, victims.length);
        for (const machine of victims) {
          await ctx.client.delete(MACHINES, machine.metadata.name, machine.metadata.namespace);
          void events.event(eventTarget(set, 'MachineSet'), 'Normal', 'SuccessfulDelete', `Deleted Machine ${machine.metadata.name}`);
        }
      }
      await writeStatus(set, active, scaling);
      if (candidates.length > remediate.length) return { requeueAfterMs: 5_000 };
    },
  });
  controller.watch(sets);
  controller.watch(inf.clusters(), onUnpause(sets));
  const ownerKey = enqueueOwner({ group: GROUP, kind: 'MachineSet' });
  controller.watch(machines, (machine, type, old) => {
    const key = ownerKey(machine, type, old) as string | undefined;
    if (!key) return undefined;
    if (type === 'add') expectations.creationObserved(key);
    if ((type === 'update' && isDeleting(machine) && !isDeleting(old ?? {})) || (type === 'delete' && !isDeleting(machine))) expectations.deletionObserved(key);
    return key;
  });
  return controller;
}
