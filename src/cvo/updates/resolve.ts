// Resolving a ClusterVersion desiredUpdate to a payload: a version-only request is looked up in
// availableUpdates (then conditionalUpdates, which marks it not recommended); a request with an
// image is taken as given. Pure.
import { BosunError } from '../../common/errors.js';
import type { ConditionalUpdate, Release } from './graph-walk.js';
import type { RecommendedCondition } from './risks.js';

export interface DesiredUpdate {
  version?: string;
  image?: string;
  force?: boolean;
}

export interface ResolvedUpdate {
  version: string;
  image: string;
  /** True: an unconditional edge; False: a conditional edge whose risks apply or are unknown; NotInGraph: not offered at all. */
  recommended: 'True' | 'False' | 'Unknown' | 'NotInGraph';
  /** Why it is not recommended, in words, when it is not. */
  message?: string;
}

export class ResolveError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('DesiredUpdateUnresolvable', message, options);
  }
}

export function resolveDesiredUpdate(
  desired: DesiredUpdate,
  availableUpdates: Release[],
  conditionalUpdates: (ConditionalUpdate & { recommended?: RecommendedCondition })[],
): ResolvedUpdate {
  const { version, image } = desired;
  if (!version && !image) throw new ResolveError('desiredUpdate names neither a version nor an image');
  const matches = (r: Release): boolean => (image ? r.image === image : r.version === version);
  const available = availableUpdates.find(matches);
  if (available) {
    if (image && version && available.version !== version) throw new ResolveError(`desiredUpdate asks for version ${version} but image ${image} is version ${available.version}`);
    return { version: available.version, image: available.image, recommended: 'True' };
  }
  const conditional = conditionalUpdates.find((c) => matches(c.release));
  if (conditional) {
    if (image && version && conditional.release.version !== version) throw new ResolveError(`desiredUpdate asks for version ${version} but image ${image} is version ${conditional.release.version}`);
    const status = conditional.recommended?.status ?? 'Unknown';
    return {
      version: conditional.release.version,
      image: conditional.release.image,
      recommended: status,
      message: conditional.recommended?.message ?? `risks: ${conditional.risks.map((r) => r.name).join(', ')}`,
    };
  }
  if (!image) {
    const offered = [...availableUpdates, ...conditionalUpdates.map((c) => c.release)].map((r) => r.version);
    throw new ResolveError(
      `version ${version} is not among the updates offered to this cluster (${offered.length ? offered.join(', ') : 'none'}); choose one of them, or name the payload by image digest`,
    );
  }
  return { version: version ?? '', image, recommended: 'NotInGraph', message: `${image} is not among the updates the update service offers for this cluster's channel` };
}
