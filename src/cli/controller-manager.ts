// `bosun controller-manager`: runs the workload controllers (ReplicaSet, Deployment, DaemonSet, Job,
// Endpoints, EndpointSlices, node lifecycle, pod garbage collection, root CA publisher; and, when
// named, OpenShift's service CA: serving certificates for annotated Services) on the
// component manager until SIGTERM, as kube-controller-manager runs them, under its Lease
// kube-system/kube-controller-manager.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { parseGoDuration } from '../common/cron-schedule.js';
import { registerComponent } from '../kube/manager-flags.js';
import { addWorkloadControllers, CONTROLLER_MANAGER, selectControllers, WORKLOAD_CONTROLLERS } from '../cluster/workloads/run.js';

interface Options {
  controllers: string;
  rootCaFile?: string;
  nodeMonitorGracePeriod: string;
  nodeEvictionRate: string;
  horizontalPodAutoscalerSyncPeriod: string;
  horizontalPodAutoscalerTolerance: string;
  horizontalPodAutoscalerDownscaleStabilization: string;
  horizontalPodAutoscalerCpuInitializationPeriod: string;
  horizontalPodAutoscalerInitialReadinessDelay: string;
}

export function register(program: Command): void {
  registerComponent<Options>(program, {
    ...CONTROLLER_MANAGER,
    description: 'run the controllers kube-controller-manager runs: ReplicaSet, Deployment, DaemonSet, StatefulSet, Job, CronJob, the horizontal pod autoscaler, resource quota, PersistentVolume binder and protection, the local-path provisioner, Endpoints, EndpointSlices, node lifecycle, pod GC, root CA publisher',
    // kube-controller-manager's lease timings.
    defaults: { leaseDuration: 15, renewDeadline: 10, retryPeriod: 2 },
    flags: (command) =>
      command
        .option('--controllers <list>', `controllers to run: * for all but service-ca, NAME to enable, -NAME to disable (known: ${Object.keys(WORKLOAD_CONTROLLERS).join(', ')})`, '*')
        .option('--node-monitor-grace-period <seconds>', 'a node whose kubelet is silent this long goes NotReady (Unknown) and is tainted unreachable', '50')
        .option('--node-eviction-rate <per-second>', 'nodes per second per zone that may get evicting (NoExecute) taints; none in a small, mostly NotReady zone, and none at all while every node is NotReady', '0.1')
        .option('--root-ca-file <file>', "the CA published to every namespace as ConfigMap kube-root-ca.crt (default: the kubeconfig's cluster CA)")
        .option('--horizontal-pod-autoscaler-sync-period <duration>', 'how often each HorizontalPodAutoscaler is looked at', '15s')
        .option('--horizontal-pod-autoscaler-tolerance <ratio>', 'a usage within this ratio of the target changes nothing', '0.1')
        .option('--horizontal-pod-autoscaler-downscale-stabilization <duration>', 'the scale-down window of an autoscaler whose spec.behavior names none', '5m0s')
        .option('--horizontal-pod-autoscaler-cpu-initialization-period <duration>', 'how long after a pod starts its CPU samples are left out unless it was ready before them', '5m0s')
        .option('--horizontal-pod-autoscaler-initial-readiness-delay <duration>', 'readiness changes this soon after a pod starts are taken as its first', '30s'),
    help: `
Leader election: the Lease kube-system/kube-controller-manager.

Example:
  $ bosun controller-manager --kubeconfig .bosun/kubeconfig
  $ kubectl create deployment web --image=bosun.local/echo --replicas=3
  $ kubectl rollout status deployment/web
  deployment "web" successfully rolled out`,
    setup(manager, o) {
      const controllers = selectControllers(o.controllers);
      if (controllers.length === 0) throw new Error(`--controllers "${o.controllers}" leaves no controller to run`);
      const grace = Number(o.nodeMonitorGracePeriod);
      if (!Number.isFinite(grace) || grace <= 0) throw new Error(`--node-monitor-grace-period must be a positive number of seconds, got "${o.nodeMonitorGracePeriod}"`);
      const rate = Number(o.nodeEvictionRate);
      if (!Number.isFinite(rate) || rate <= 0) throw new Error(`--node-eviction-rate must be a positive number of nodes per second, got "${o.nodeEvictionRate}"`);
      const duration = (flag: string, value: string) => {
        const ms = parseGoDuration(value);
        if (ms === undefined || ms <= 0) throw new Error(`--${flag} must be a positive duration such as 15s or 5m0s, got "${value}"`);
        return ms;
      };
      const tolerance = Number(o.horizontalPodAutoscalerTolerance);
      if (!Number.isFinite(tolerance) || tolerance < 0) throw new Error(`--horizontal-pod-autoscaler-tolerance must be a number of at least 0, got "${o.horizontalPodAutoscalerTolerance}"`);
      const hpa = {
        syncPeriodMs: duration('horizontal-pod-autoscaler-sync-period', o.horizontalPodAutoscalerSyncPeriod),
        tolerance,
        downscaleStabilizationMs: duration('horizontal-pod-autoscaler-downscale-stabilization', o.horizontalPodAutoscalerDownscaleStabilization),
        cpuInitializationMs: duration('horizontal-pod-autoscaler-cpu-initialization-period', o.horizontalPodAutoscalerCpuInitializationPeriod),
        initialReadinessDelayMs: duration('horizontal-pod-autoscaler-initial-readiness-delay', o.horizontalPodAutoscalerInitialReadinessDelay),
      };
      addWorkloadControllers(manager, { controllers, rootCa: o.rootCaFile ? readFileSync(o.rootCaFile, 'utf8') : undefined, nodeLifecycle: { gracePeriodMs: grace * 1000, evictionRate: rate }, hpa });
    },
  });
}
