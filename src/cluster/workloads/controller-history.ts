// A workload's template history in ControllerRevisions, as kube's DaemonSet and StatefulSet
// controllers keep it (pkg/controller/history; `kubectl rollout history` / `rollout undo` read
// it): one revision per template, named `<owner>-<hash>`, labelled with the template's labels and
// its controller-revision-hash, holding a strategic merge patch that puts the template back
// (`$patch: replace`). The current template's revision is created, or — after a rollback —
// renumbered above the others; duplicates go; old revisions no live pod runs go beyond
// revisionHistoryLimit, oldest first.
import type * as api from '../../api/index.js';
import { controllerOf, controllerReference, isAlreadyExists, isNotFound } from '../../kube/index.js';
import { canonicalJson, withoutEmpty } from '../../kube/canonical.js';
import type { WorkloadContext } from './context.js';
import { claim, ownerStillThere } from './claim.js';
import { matchesLabels, type LabelSelector } from '../../common/label-selectors.js';
import type { ResourceRef } from '../../kube/index.js';
import { CONTROLLER_REVISION_HASH, CONTROLLER_REVISIONS } from './resources.js';

/** A workload with a template history: a DaemonSet or a StatefulSet. */
export type HistoryOwner = api.DaemonSet | api.StatefulSet;

/** What a ControllerRevision holds (kube's getPatch): a strategic merge patch that replaces the template. */
export interface RevisionPatch {
  spec: { template: api.PodTemplateSpec & { $patch: 'replace' } };
}

export function revisionPatch(owner: HistoryOwner): RevisionPatch {
  return { spec: { template: { ...structuredClone(owner.spec?.template ?? {}), $patch: 'replace' } } };
}

/** The template a revision puts back (kube's ApplyRevision). */
export function revisionTemplate(revision: api.ControllerRevision): api.PodTemplateSpec {
  const { $patch: _replace, ...template } = (revision.data as Partial<RevisionPatch> | undefined)?.spec?.template ?? ({} as RevisionPatch['spec']['template']);
  return template;
}

const samePatch = (a: unknown, b: unknown) => canonicalJson(withoutEmpty(a)) === canonicalJson(withoutEmpty(b));
const revisionOf = (h: api.ControllerRevision) => Number(h.revision ?? 0);

/**
 * The ControllerRevisions `owner` controls, adopting the orphans its selector matches and
 * releasing those it no longer matches (claim.ts), as both kube controllers with a history do.
 */
export function claimHistory<T extends HistoryOwner>(ctx: WorkloadContext, owner: T, resource: ResourceRef<T>, selector: LabelSelector): Promise<api.ControllerRevision[]> {
  return claim(ctx.informers.controllerRevisions.list().filter((h) => h.metadata.namespace === owner.metadata.namespace), {
    client: ctx.client,
    resource: CONTROLLER_REVISIONS,
    owner,
    matches: (h) => matchesLabels(selector, h.metadata.labels),
    canAdopt: ownerStillThere(ctx.client, resource, owner),
  });
}

/**
 * Makes sure the current template has the newest revision; returns it and the other revisions.
 * `owned` are the ControllerRevisions the owner controls; `resource` is the owner's kind (its
 * status gets a higher collision count when another template hashed to the same name).
 */
export async function constructHistory<T extends HistoryOwner>(
  ctx: WorkloadContext,
  ds: T,
  resource: ResourceRef<T>,
  owned: api.ControllerRevision[],
  hash: string,
): Promise<{ current: api.ControllerRevision; old: api.ControllerRevision[] }> {
  const patch = revisionPatch(ds);
  const matching = owned.filter((h) => h.metadata.labels?.[CONTROLLER_REVISION_HASH] === hash || samePatch(h.data, patch)).sort((a, b) => revisionOf(b) - revisionOf(a));
  const others = owned.filter((h) => !matching.includes(h));
  const max = Math.max(0, ...owned.map(revisionOf));
  let current: api.ControllerRevision;
  if (matching.length === 0) {
    const name = `${ds.metadata.name}-${hash}`;
    const revision: api.ControllerRevision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name,
        namespace: ds.metadata.namespace,
        labels: { ...(ds.spec?.template?.metadata?.labels ?? {}), [CONTROLLER_REVISION_HASH]: hash },
        ...(ds.metadata.annotations ? { annotations: { ...ds.metadata.annotations } } : {}),
        ownerReferences: [controllerReference(ds)],
      },
      data: patch,
      revision: max + 1,
    };
    try {
      current = await ctx.client.create(CONTROLLER_REVISIONS, revision);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
      const found = await ctx.client.read(CONTROLLER_REVISIONS, name, ds.metadata.namespace);
      if (!found || controllerOf(found)?.uid !== ds.metadata.uid || !samePatch(found.data, patch)) {
        // Another template hashed to this name: hash again with a higher collision count.
        // A status not written yet has its counts left to the API server's defaults (zero).
        const status = { ...ds.status, collisionCount: (ds.status?.collisionCount ?? 0) + 1 } as T['status'];
        await ctx.client.update(resource, { ...ds, status } as T, 'status');
        throw e;
      }
      current = found;
    }
  } else {
    [current] = matching;
    for (const duplicate of matching.slice(1)) await deleteRevision(ctx, duplicate);
    if (revisionOf(current) < max) current = await ctx.client.update(CONTROLLER_REVISIONS, { ...current, revision: max + 1 });
  }
  return { current, old: others };
}

/**
 * Deletes old revisions beyond revisionHistoryLimit that no live pod runs, oldest first (kube's
 * cleanupHistory). `live` says whether a pod runs a revision (a DaemonSet's pods carry its hash, a
 * StatefulSet's its name); `keep` are revisions kept whatever (a StatefulSet's current one).
 */
export async function cleanupHistory(ctx: WorkloadContext, owner: HistoryOwner, old: api.ControllerRevision[], pods: api.Pod[], keep: string[] = []): Promise<void> {
  let toKill = old.length - (owner.spec?.revisionHistoryLimit ?? 10);
  if (toKill <= 0) return;
  const live = new Set(pods.map((p) => p.metadata?.labels?.[CONTROLLER_REVISION_HASH]).filter(Boolean));
  for (const history of [...old].sort((a, b) => revisionOf(a) - revisionOf(b))) {
    if (toKill <= 0) break;
    if (live.has(history.metadata.labels?.[CONTROLLER_REVISION_HASH]) || live.has(history.metadata.name) || keep.includes(history.metadata.name)) continue;
    await deleteRevision(ctx, history);
    toKill--;
  }
}

async function deleteRevision(ctx: WorkloadContext, history: api.ControllerRevision): Promise<void> {
  try {
    await ctx.client.delete(CONTROLLER_REVISIONS, history.metadata.name, history.metadata.namespace, { preconditions: { uid: history.metadata.uid } });
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
