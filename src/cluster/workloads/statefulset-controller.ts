// The StatefulSet controller, as kube-controller-manager's: it claims the pods and
// ControllerRevisions its selector matches, keeps the template history (controller-history.ts;
// pods carry their revision's name in controller-revision-hash), takes the next steps
// statefulset.ts plans — each pod's claims created before the pod, finished pods recreated,
// surplus pods deleted highest ordinal first (their claims given to them first when
// persistentVolumeClaimRetentionPolicy.whenScaled is Delete), the rolling update one pod at a
// time — and writes the status `kubectl rollout status statefulset` reads, with kube's Events.
import type * as api from '../../api/index.js';
import { BosunError } from '../../common/errors.js';
import { Controller, controllerOf, isAlreadyExists, isNotFound, type SyncResult } from '../../kube/index.js';
import { matchesLabels } from '../../common/label-selectors.js';
import { sameJson } from '../../kube/canonical.js';
import { templateHash } from '../../kube/template-hash.js';
import { claim, ownerStillThere } from './claim.js';
import { controllingOwner, keyFor, type WorkloadContext } from './context.js';
import { claimHistory, cleanupHistory, constructHistory, revisionTemplate } from './controller-history.js';
import { Expectations } from './expectations.js';
import { observePods } from './pod-control.js';
import { msUntilAvailable } from './pods.js';
import { ownerKeys, selectorOf } from './owners.js';
import { PERSISTENT_VOLUME_CLAIMS, PODS, STATEFUL_SETS } from './resources.js';
import { claimsGoWhenScaled, planStatefulSet, podClaims, ordinalOf, statefulSetStatus, type Revision } from './statefulset.js';

/** A pod's claim could not be made (its Event already says so); the pod waits for the next sync. */
class ClaimError extends BosunError {
  constructor(message: string) {
    super('ClaimNotCreated', message);
  }
}

export function statefulSetController(ctx: WorkloadContext, expectations = new Expectations(ctx.clock)): Controller {
  const { pods, statefulSets, controllerRevisions } = ctx.informers;
  observePods(ctx, 'StatefulSet', expectations);


  const controller = new Controller({ name: 'statefulset-controller', clock: ctx.clock, workers: 2, sync: (key) => sync(key) });
  controller.watch(statefulSets);
  controller.watch(pods, (pod, _type, old) => ownerKeys(pod, old, 'StatefulSet', statefulSets));
  controller.watch(controllerRevisions, (history) => (controllingOwner(history, 'StatefulSet', statefulSets) ? `${history.metadata.namespace}/${controllerOf(history)!.name}` : undefined));

  async function sync(key: string): Promise<SyncResult | void> {
    const set = statefulSets.getByKey(key);
    if (!set) {
      expectations.forget(key);
      return;
    }
    const selector = selectorOf(set);
    const owned = await claim(
      pods.list().filter((p) => p.metadata.namespace === set.metadata.namespace),
      {
        client: ctx.client,
        resource: PODS,
        owner: set,
        // Only pods named as its own (kube's isMemberOf) besides the selector.
        matches: (p) => matchesLabels(selector, p.metadata.labels) && ordinalOf(set, p) !== undefined,
        canAdopt: ownerStillThere(ctx.client, STATEFUL_SETS, set),
      },
    );
    const histories = await claimHistory(ctx, set, STATEFUL_SETS, selector);
    const hash = templateHash(set.spec?.template ?? {}, set.status?.collisionCount);
    const { current: updateRevision, old } = await constructHistory(ctx, set, STATEFUL_SETS, histories, hash);
    const update: Revision = { name: updateRevision.metadata.name, template: set.spec?.template ?? {} };
    const currentRevision = [updateRevision, ...old].find((h) => h.metadata.name === set.status?.currentRevision) ?? updateRevision;
    const current: Revision = { name: currentRevision.metadata.name, template: revisionTemplate(currentRevision) };
    const now = ctx.clock.now();

    let error: Error | undefined;
    if (!set.metadata.deletionTimestamp && expectations.satisfied(key)) {
      error = await act(set, planStatefulSet(set, owned, current, update, now));
      if (!error) await cleanupHistory(ctx, set, old, owned, [current.name, update.name]);
    }
    const status = statefulSetStatus(set, owned, current, update, now);
    if (!sameJson(status, set.status ?? {})) await ctx.client.update(STATEFUL_SETS, { ...set, status }, 'status');
    if (error) throw error;
    const waits = owned.map((p) => msUntilAvailable(p, set.spec?.minReadySeconds ?? 0, now)).filter((ms): ms is number => ms !== undefined);
    if (waits.length) return { requeueAfterMs: Math.min(...waits) + 50 };
  }

  /** Carries a plan out: deletions, then claims and pods, then identity labels. Returns the first error. */
  async function act(set: api.StatefulSet, plan: ReturnType<typeof planStatefulSet>): Promise<Error | undefined> {
    const key = keyFor(set);
    const setName = set.metadata.name;
    expectations.expect(key, plan.create.length, plan.delete.map(({ pod }) => keyFor(pod)));
    let firstError: Error | undefined;
    for (const { pod, why } of plan.delete) {
      try {
        if (why === 'recreate') void ctx.events.event(set, 'Warning', 'RecreatingFailedPod', `StatefulSet ${key} is recreating failed Pod ${pod.metadata.name}`);
        if (why === 'scale-down' && claimsGoWhenScaled(set)) await giveClaimsTo(set, pod);
        await ctx.client.delete(PODS, pod.metadata.name, pod.metadata.namespace, { preconditions: { uid: pod.metadata.uid } });
        void ctx.events.event(set, 'Normal', 'SuccessfulDelete', `delete Pod ${pod.metadata.name} in StatefulSet ${setName} successful`);
      } catch (e) {
        expectations.deletionObserved(key, keyFor(pod));
        if (isNotFound(e)) continue;
        firstError ??= e as Error;
        void ctx.events.event(set, 'Warning', 'FailedDelete', `delete Pod ${pod.metadata.name} in StatefulSet ${setName} failed error: ${(e as Error).message}`);
      }
    }
    for (const { pod, claims } of plan.create) {
      try {
        for (const wanted of claims) await ensureClaim(set, pod, wanted);
        await ctx.client.create(PODS, pod);
        void ctx.events.event(set, 'Normal', 'SuccessfulCreate', `create Pod ${pod.metadata.name} in StatefulSet ${setName} successful`);
      } catch (e) {
        expectations.creationObserved(key);
        firstError ??= e as Error;
        // A claim's failure has had its own Event.
        if (!(e instanceof ClaimError)) void ctx.events.event(set, 'Warning', 'FailedCreate', `create Pod ${pod.metadata.name} in StatefulSet ${setName} failed error: ${(e as Error).message}`);
      }
    }
    for (const { pod, labels } of plan.relabel) {
      try {
        await ctx.client.mergePatch(PODS, pod.metadata.name, pod.metadata.namespace, { metadata: { labels, resourceVersion: pod.metadata.resourceVersion } });
      } catch (e) {
        if (!isNotFound(e)) firstError ??= e as Error;
      }
    }
    return firstError;
  }

  /** Creates a pod's claim unless it exists; a claim being deleted holds the pod back until it is gone. */
  async function ensureClaim(set: api.StatefulSet, pod: api.Pod, wanted: api.PersistentVolumeClaim): Promise<void> {
    const name = wanted.metadata.name;
    const fail = (message: string): never => {
      void ctx.events.event(set, 'Warning', 'FailedCreate', `create Claim ${name} for Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${message}`);
      throw new ClaimError(message);
    };
    try {
      await ctx.client.create(PERSISTENT_VOLUME_CLAIMS, wanted);
      void ctx.events.event(set, 'Normal', 'SuccessfulCreate', `create Claim ${name} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} success`);
    } catch (e) {
      if (!isAlreadyExists(e)) fail((e as Error).message);
      const existing = await ctx.client.read(PERSISTENT_VOLUME_CLAIMS, name, set.metadata.namespace);
      if (existing?.metadata.deletionTimestamp) fail(`pvc ${name} is being deleted`);
    }
  }

  /** whenScaled: Delete — the condemned pod becomes its claims' owner, so they go when it does. */
  async function giveClaimsTo(set: api.StatefulSet, pod: api.Pod): Promise<void> {
    const ordinal = ordinalOf(set, pod)!;
    const owner = { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid!, controller: false, blockOwnerDeletion: true };
    for (const wanted of podClaims(set, ordinal)) {
      const existing = await ctx.client.read(PERSISTENT_VOLUME_CLAIMS, wanted.metadata.name, set.metadata.namespace).catch(() => undefined);
      if (!existing || (existing.metadata.ownerReferences ?? []).some((r) => r.uid === owner.uid)) continue;
      await ctx.client.mergePatch(PERSISTENT_VOLUME_CLAIMS, existing.metadata.name, existing.metadata.namespace, {
        metadata: { resourceVersion: existing.metadata.resourceVersion, ownerReferences: [...(existing.metadata.ownerReferences ?? []), owner] },
      });
    }
  }

  return controller;
}
