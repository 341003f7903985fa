// Release verification for the CVO, as OpenShift does it: the payload's content must match the
// digest it is named by, and the digest must carry a signature from a trusted key. Trusted keys
// and signature stores come from ConfigMaps annotated release.openshift.io/verification-config-map
// (keys `verifier-public-key-*` and `store-*`) plus ClusterVersion spec.signatureStores; with no
// such ConfigMap nothing is verified (as in OpenShift builds without a verifier) and history says
// verified: false.
import { isNotFound, type KubeClient } from '../kube/client.js';
import { resources } from '../kube/resources.js';
import { computeReleaseDigest, digestOfPullspec } from '../release/release-store.js';
import { readKeyring, verifyReleaseSignature } from '../release/signature.js';
import { SignatureError } from '../release/signature-error.js';
import { fetchSignatures } from '../release/signature-store.js';

export const VERIFICATION_ANNOTATION = 'release.openshift.io/verification-config-map';
export const VERIFICATION_NAMESPACE = 'openshift-config-managed';
const CONFIG_MAPS = resources.configMaps;

export interface Verifier {
  armoredKeys: string[];
  stores: string[];
}

export type Verification = { verified: true; signer: string } | { verified: false; reason: string };

/** The verifier configured in the cluster, or undefined when none is. */
export async function loadVerifier(client: KubeClient, signatureStores: Array<{ url: string }> = []): Promise<Verifier | undefined> {
  let maps: Array<{ metadata?: { annotations?: Record<string, string> }; data?: Record<string, string> }>;
  try {
    maps = (await client.list(CONFIG_MAPS, VERIFICATION_NAMESPACE)).items ?? [];
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  const verifiers = maps.filter((m) => m.metadata?.annotations?.[VERIFICATION_ANNOTATION] !== undefined);
  if (verifiers.length === 0) return undefined;
  const armoredKeys: string[] = [];
  const stores: string[] = signatureStores.map((s) => s.url);
  for (const cm of verifiers) {
    for (const [key, value] of Object.entries(cm.data ?? {})) {
      if (key.startsWith('verifier-public-key-')) armoredKeys.push(value);
      if (key.startsWith('store-')) stores.push(value.trim());
    }
  }
  return { armoredKeys, stores };
}

/** Checks a release directory against its pullspec's digest. Returns a problem, or undefined. */
export function digestProblem(dir: string, pullspec: string): string | undefined {
  const expected = digestOfPullspec(pullspec);
  const actual = computeReleaseDigest(dir);
  return actual === expected ? undefined : `the payload's content has digest sha256:${actual}, not the sha256:${expected} it is named by: it was altered`;
}

/** Looks for a signature of the pullspec's digest, from a trusted key, in the verifier's stores. */
export async function verifyRelease(verifier: Verifier, pullspec: string): Promise<Verification> {
  if (verifier.armoredKeys.length === 0) return { verified: false, reason: 'the verification ConfigMap holds no verifier-public-key-* entry' };
  const keyring = await readKeyring(verifier.armoredKeys.join('\n'));
  const digest = `sha256:${digestOfPullspec(pullspec)}`;
  const problems: string[] = [];
  for (const store of verifier.stores) {
    let signatures: Uint8Array[];
    try {
      signatures = await fetchSignatures(store, digest, { timeoutMs: 10_000 });
    } catch (e) {
      problems.push((e as Error).message);
      continue;
    }
    if (signatures.length === 0) problems.push(`${store} has no signature for ${digest}`);
    for (const signature of signatures) {
      try {
        const ok = await verifyReleaseSignature(signature, digest, keyring);
        return { verified: true, signer: `${ok.keyID}${ok.signer.length ? ` (${ok.signer.join(', ')})` : ''}` };
      } catch (e) {
        problems.push(e instanceof SignatureError ? `${e.reason}: ${e.message}` : (e as Error).message);
      }
    }
  }
  if (verifier.stores.length === 0) problems.push('no signature store is configured (store-* in the verification ConfigMap, or spec.signatureStores)');
  return { verified: false, reason: problems.join('; ') };
}
