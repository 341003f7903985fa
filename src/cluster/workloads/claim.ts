// Adoption and orphaning, as kube's ControllerRefManager: a controller owns the objects whose
// controller reference names it; an orphan its selector matches is adopted (its controller
// reference added), an owned object its selector no longer matches is released (the reference
// removed). Objects another controller owns are never touched. Patches carry the object's
// resourceVersion, so an object changed meanwhile is not claimed on stale facts (the sync fails
// with a conflict and runs again).
import type * as api from '../../api/index.js';
import { type KubeClient, type ResourceRef, isNotFound } from '../../kube/index.js';
import { controllerOf, controllerReference, type OwnerReference } from '../../kube/index.js';

export interface ClaimOptions<T extends api.KubeObject> {
  client: KubeClient;
  /** The kind of the candidates. */
  resource: ResourceRef<T>;
  owner: api.KubeObject;
  matches: (object: T) => boolean;
  /**
   * Checked once before the first adoption: throws when the owner was deleted or replaced meanwhile
   * (kube re-reads the owner from the API server, not its cache).
   */
  canAdopt: () => Promise<void>;
}

/** The candidates the owner controls after adopting and releasing (kube's Claim* functions). */
export async function claim<T extends api.KubeObject>(candidates: T[], options: ClaimOptions<T>): Promise<T[]> {
  const { client, resource, owner, matches } = options;
  const uid = owner.metadata.uid;
  const ownerDeleting = Boolean(owner.metadata.deletionTimestamp);
  const claimed: T[] = [];
  let adoptionChecked = false;
  for (const object of candidates) {
    const ref = controllerOf(object);
    const refs: OwnerReference[] = object.metadata.ownerReferences ?? [];
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matches(object)) {
        claimed.push(object);
      } else if (!ownerDeleting) {
        const rest = refs.filter((r) => r.uid !== uid);
        await patchOwners(client, resource, object, rest);
      }
      continue;
    }
    if (ownerDeleting || !matches(object) || object.metadata.deletionTimestamp) continue;
    if (object.metadata.namespace !== owner.metadata.namespace) continue;
    if (!adoptionChecked) {
      await options.canAdopt();
      adoptionChecked = true;
    }
    const adopted = await patchOwners(client, resource, object, [...refs, controllerReference(owner)]);
    if (adopted) claimed.push(adopted);
  }
  return claimed;
}

async function patchOwners<T extends api.KubeObject>(client: KubeClient, resource: ResourceRef<T>, object: T, owners: OwnerReference[]): Promise<T | undefined> {
  try {
    return await client.mergePatch(resource, object.metadata.name, object.metadata.namespace, {
      metadata: { ownerReferences: owners.length ? owners : null, resourceVersion: object.metadata.resourceVersion },
    });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** A canAdopt that re-reads the owner: refuses when it is gone, replaced or being deleted. */
export function ownerStillThere<T extends api.KubeObject>(client: KubeClient, resource: ResourceRef<T>, owner: T): () => Promise<void> {
  return async () => {
    const fresh = await client.read(resource, owner.metadata.name, owner.metadata.namespace);
    if (!fresh || fresh.metadata.uid !== owner.metadata.uid) throw new Error(`${owner.kind} ${owner.metadata.namespace}/${owner.metadata.name} is gone (uid ${owner.metadata.uid}); not adopting for it`);
    if (fresh.metadata.deletionTimestamp) throw new Error(`${owner.kind} ${owner.metadata.namespace}/${owner.metadata.name} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
  };
}
