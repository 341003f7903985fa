// What the API server's defaults and the horizontal pod autoscaler share about autoscaling/v2:
// the CPU target when no metric is named, and kube's scale-up and scale-down rules when a
// behavior leaves them out.
import type * as api from '../api/index.js';

/** The target when none is named: 80% of the pods' CPU requests (kube's v2 default). */
export const DEFAULT_CPU_UTILIZATION = 80;

/** Up by the larger of 4 pods or 100% per 15 s, at once. */
export function defaultScaleUp(): api.HPAScalingRules {
  return { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] };
}

/** Down by up to 100% per 15 s, after 300 s of lower recommendations. */
export function defaultScaleDown(): api.HPAScalingRules {
  return { stabilizationWindowSeconds: 300, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
}
