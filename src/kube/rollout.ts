// Whether a Deployment has rolled out, read from what the Deployment controller reports (as
// `kubectl rollout status` reads it): for operators reporting their operands, and the install's
// hand-over.
import type * as api from '../api/index.js';

/** Rolled out as the Deployment controller reports it: this generation observed, every replica updated and available, no old ones left. */
export function rolledOut(deployment: api.Deployment | undefined): boolean {
  if (!deployment) return false;
  const want = deployment.spec?.replicas ?? 1;
  const s: NonNullable<api.Deployment['status']> = deployment.status ?? {};
  return (s.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 1)
    && (s.updatedReplicas ?? 0) === want && (s.availableReplicas ?? 0) === want && (s.replicas ?? 0) === want;
}
