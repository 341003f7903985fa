// The catalog operator's InstallPlan controller: carries out a plan's steps once it is approved.
//
//   (no phase)        the Subscription controller is still writing the plan: wait for it
//   RequiresApproval  → Installing when spec.approved is true (Manual plans wait here)
//   Installing        each step applied in order (created, or patched to say what its manifest
//                     says: Created / Present); a kind not served yet (a CRD just created) waits
//                     (WaitingForAPI) and is tried again; all applied → Complete
//   Installing        a step the API server refuses (invalid, forbidden) → Failed, the message
//                     naming the step and the answer
//   Complete, Failed  final
// Transient errors (the server unreachable, a conflict) are retried with the queue's back-off.
import type * as api from '../api/index.js';
import { Controller, KubeApiError, applyObject, isNotFound, resources, rfc3339 } from '../kube/index.js';
import { COPIED_FROM } from './copied-csv-controller.js';
import type { OlmContext } from './context.js';
import { writeStatus } from './status.js';

/** Whether an answer means the step itself is wrong (retrying will not help). */
const refused = (e: unknown) => e instanceof KubeApiError && [400, 403, 422].includes(e.code);

export function installPlanController(ctx: OlmContext): Controller {
  const plans = ctx.informer(resources.installPlans);
  const controller = new Controller({ name: 'install-plan-controller', clock: ctx.clock, sync });
  controller.watch(plans);
  return controller;

  async function sync(key: string) {
    const [namespace, name] = key.split('/');
    const plan = plans.get(name, namespace);
    if (!plan?.status?.phase) return;
    let status: api.InstallPlanStatus = structuredClone(plan.status);
    if (status.phase === 'RequiresApproval') {
      if (!plan.spec.approved) return;
      status.phase = 'Installing';
    }
    if (status.phase !== 'Installing') return;
    const steps = status.plan ?? [];
    let waiting = false;
    for (const [i, step] of steps.entries()) {
      if (step.status === 'Created' || step.status === 'Present') continue;
      const object = JSON.parse(step.resource.manifest ?? '{}') as api.Unstructured;
      const what = `step ${i + 1} (${step.resource.kind} ${object.metadata?.namespace ? `${object.metadata.namespace}/` : ''}${step.resource.name})`;
      let ref;
      try {
        ref = await ctx.client.resourceFor(String(object.apiVersion), String(object.kind));
      } catch (e) {
        if (!(e instanceof KubeApiError && e.code === 404)) throw e;
        step.status = 'WaitingForAPI';
        waiting = true;
        break;
      }
      try {
        // A CSV installed where the copy of another namespace's operator stands replaces the copy
        // (copied-csv-controller.ts copies nothing over a CSV of its own).
        if (object.kind === 'ClusterServiceVersion') await removeCopy(object.metadata.name, object.metadata.namespace);
        const { action } = await applyObject(ctx.client, object, ref);
        step.status = action === 'created' ? 'Created' : 'Present';
      } catch (e) {
        if (!refused(e)) throw e;
        status = { ...status, phase: 'Failed', message: `${what} was refused: ${(e as Error).message}`, conditions: [{ type: 'Installed', status: 'False', reason: 'InstallComponentFailed', message: `${what} was refused: ${(e as Error).message}`, lastTransitionTime: rfc3339(new Date(ctx.clock.now())) }] };
        await writeStatus(ctx.client, resources.installPlans, plan, status);
        return;
      }
    }
    if (!waiting) {
      status.phase = 'Complete';
      status.conditions = [{ type: 'Installed', status: 'True', reason: 'InstallSucceeded', lastTransitionTime: rfc3339(new Date(ctx.clock.now())) }];
    }
    await writeStatus(ctx.client, resources.installPlans, plan, status);
    return waiting ? { requeueAfterMs: 1000 } : undefined;
  }

  async function removeCopy(name: string, namespace: string | undefined): Promise<void> {
    const live = await ctx.client.read(resources.clusterServiceVersions, name, namespace);
    if (!live?.metadata.labels?.[COPIED_FROM]) return;
    await ctx.client.delete(resources.clusterServiceVersions, name, namespace, { preconditions: { uid: live.metadata.uid } }).catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
  }
}
