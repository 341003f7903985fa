// Loading a release for the CVO, as OpenShift's RetrievePayload → LoadPayload →
// VerifyPayloadVersion steps (and the upgrade preconditions before an update starts): resolves
// the pullspec in the release store, verifies its digest and signature (verify.ts), loads and
// validates the payload, refuses kinds nobody serves, checks the version asked for, and runs
// the preconditions. Returns the payload with what ReleaseAccepted says, or the step that
// refused it and why; the caller writes the status (status.ts).
import { loadPayload, type Payload } from './payload/payload.js';
import { resolvePullspec } from '../release/release-store.js';
import { resolveDesiredUpdate } from './updates/resolve.js';
import { checkPreconditions } from './updates/preconditions.js';
import { digestProblem, loadVerifier, verifyRelease } from './verify.js';
import { isNotFound, type KubeClient } from '../kube/client.js';
import type { Accepted } from './status.js';

import type * as api from '../api/index.js';

export interface Loaded {
  image: string;
  payload: Payload;
}

export type LoadResult = { loaded: Loaded; accepted: Accepted } | { refused: { reason: string; message: string } };

/** Loads `image` (asked for as `wantVersion`, if given) for the ClusterVersion `cv`. */
export async function loadRelease(client: KubeClient, releaseStore: string, image: string, wantVersion: string | undefined, cv: api.ClusterVersion): Promise<LoadResult> {
  const refuse = (reason: string, message: string): LoadResult => ({ refused: { reason, message } });
  const failed = (step: string, failure: string, version = wantVersion ?? '') => `${step} failed version="${version}" image="${image}" failure=${failure}`;
  let dir: string;
  try {
    dir = resolvePullspec(releaseStore, image);
  } catch (e) {
    return refuse('RetrievePayload', failed('Retrieving payload', (e as Error).message));
  }
  const force = cv.spec?.desiredUpdate?.force === true;
  const risks: string[] = [];
  let verified = false;
  const unverified = (why: string) => `The update cannot be verified: ${why}`;
  const tampered = digestProblem(dir, image);
  if (tampered) {
    if (!force) return refuse('RetrievePayload', failed('Retrieving payload', unverified(tampered)));
    risks.push(`${unverified(tampered)}; the image may not be safe to use`);
  }
  const verifier = await loadVerifier(client, cv.spec?.signatureStores);
  if (verifier) {
    const result = await verifyRelease(verifier, image);
    if (result.verified) verified = !tampered;
    else if (!force) return refuse('RetrievePayload', failed('Retrieving payload', unverified(result.reason)));
    else risks.push(`${unverified(result.reason)}; the image may not be safe to use`);
  }
  let payload: Payload;
  try {
    payload = loadPayload(dir);
  } catch (e) {
    return refuse('LoadPayload', failed('Loading payload', (e as Error).message));
  }
  const unknownKind = await firstUnknownKind(client, payload);
  if (unknownKind) return refuse('LoadPayload', failed('Loading payload', unknownKind));
  if (wantVersion && payload.version !== wantVersion) {
    return refuse('VerifyPayloadVersion', `Verifying payload failed version="${wantVersion}" image="${image}" failure=release image version ${payload.version} does not match the expected upstream version ${wantVersion}`);
  }
  // Preconditions, for an update from a completed release to another version.
  const completed = (cv.status?.history ?? []).filter((h) => h.state === 'Completed');
  const current = completed[0];
  if (current && current.image !== image && current.version !== payload.version) {
    let target;
    try {
      target = resolveDesiredUpdate({ image }, cv.status?.availableUpdates ?? [], cv.status?.conditionalUpdates ?? []);
    } catch {
      target = { version: payload.version, image, recommended: 'NotInGraph' as const };
    }
    const result = checkPreconditions({
      currentVersion: current.version ?? '',
      target: { ...target, version: payload.version },
      previousVersion: completed[1]?.version,
      upgradeable: (cv.status?.conditions ?? []).find((c) => c.type === 'Upgradeable'),
      force,
    });
    if (!result.accepted) {
      return refuse('PreconditionChecks', `Preconditions failed for payload loaded version="${payload.version}" image="${image}": ${result.blocking.map((b) => `${b.name}: ${b.message}`).join('; ')}`);
    }
    const accepted = result.acceptedRisks ?? (result.warnings.length ? result.warnings.map((w) => w.message).join('; ') : undefined);
    if (accepted) risks.push(accepted);
  }
  const acceptedRisks = risks.length ? risks.join('\n') : undefined;
  const message = `Payload loaded version="${payload.version}" image="${image}" architecture="${process.arch === 'x64' ? 'amd64' : process.arch}"${acceptedRisks ? ` (accepted risks: ${acceptedRisks})` : ''}`;
  return { loaded: { image, payload }, accepted: { version: payload.version, image, verified, acceptedRisks, message } };
}

/**
 * The first manifest whose kind neither the cluster serves nor a CRD of the payload defines
 * (described with its file), so that such a payload is refused before anything is applied.
 */
async function firstUnknownKind(client: KubeClient, payload: Payload): Promise<string | undefined> {
  const defined = new Set<string>();
  for (const m of payload.manifests) {
    const crd = m.object as unknown as api.CustomResourceDefinition;
    if (m.gvk.kind !== 'CustomResourceDefinition' || !crd.spec?.group || !crd.spec?.names?.kind) continue;
    for (const v of crd.spec.versions ?? []) defined.add(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`);
  }
  const checked = new Map<string, boolean>();
  for (const m of payload.manifests) {
    const apiVersion = m.object.apiVersion;
    const key = `${apiVersion}/${m.gvk.kind}`;
    if (defined.has(key)) continue;
    let known = checked.get(key);
    if (known === undefined) {
      try {
        await client.resourceFor(apiVersion, m.gvk.kind);
        known = true;
      } catch (e) {
        if (!isNotFound(e)) throw e;
        known = false;
      }
      checked.set(key, known);
    }
    if (!known) return `release-manifests/${m.file} (document ${m.document}): the cluster serves no kind ${m.gvk.kind} in ${apiVersion}, and no CustomResourceDefinition in the payload defines it`;
  }
  return undefined;
}
