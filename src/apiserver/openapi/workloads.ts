// OpenAPI schemas of the workload kinds: Deployments, ReplicaSets, DaemonSets, StatefulSets
// (apps/v1), Jobs and CronJobs (batch/v1), HorizontalPodAutoscalers (autoscaling/v2 and v1).
import { bool, CORE, free, int, intOrString, kind, list, META, object, ref, SPEC, STATUS, str, time, type Schema } from './builders.js';

export const WORKLOAD_SCHEMAS: Record<string, Schema> = {
  'io.k8s.api.apps.v1.Deployment': kind('Deployment keeps a number of identical pods running and rolls out changes to them declaratively, through ReplicaSets.', {
    spec: ref('io.k8s.api.apps.v1.DeploymentSpec', SPEC),
    status: ref('io.k8s.api.apps.v1.DeploymentStatus', STATUS),
  }),
  'io.k8s.api.apps.v1.DeploymentSpec': object('The desired state of a deployment.', {
    replicas: int('The number of pods wanted. Defaults to 1.'),
    selector: ref(`${META}.LabelSelector`, "Selects the pods this deployment manages; must match the template's labels. Cannot change in apps/v1."),
    template: ref(`${CORE}.PodTemplateSpec`, 'The pods to create.'),
    strategy: { ...ref('io.k8s.api.apps.v1.DeploymentStrategy', 'How old pods are replaced by new ones.'), 'x-kubernetes-patch-strategy': 'retainKeys' },
    minReadySeconds: int('Seconds a new pod must be ready, without any container crashing, to count as available (0 by default).'),
    revisionHistoryLimit: int('How many old ReplicaSets to keep for rollback (10 by default).'),
    paused: bool('When true, changes to the template do not roll out.'),
    progressDeadlineSeconds: int('Seconds a rollout may go without progress before it is reported as failed (600 by default).'),
  }, ['selector', 'template']),
  'io.k8s.api.apps.v1.DeploymentStrategy': object('How a deployment replaces pods.', {
    type: str('Recreate (all old pods go first) or RollingUpdate (default).', { enum: ['Recreate', 'RollingUpdate'] }),
    rollingUpdate: object('Bounds of a rolling update.', {
      maxSurge: intOrString('How many pods (or what percentage) may exist above the wanted number during the update (25% by default).'),
      maxUnavailable: intOrString('How many pods (or what percentage) may be unavailable during the update (25% by default).'),
    }),
  }),
  'io.k8s.api.apps.v1.DeploymentStatus': object('The observed state of a deployment.', {
    observedGeneration: int('The generation the controller last acted on.', 'int64'),
    replicas: int('Pods targeted by this deployment (their labels match the selector).'),
    updatedReplicas: int('Pods with the current template.'),
    readyReplicas: int('Pods that are ready.'),
    availableReplicas: int('Pods that have been ready for at least minReadySeconds.'),
    unavailableReplicas: int('Pods still needed for the deployment to be fully available.'),
    conditions: list(`${META}.Condition`, 'Available, Progressing and ReplicaFailure.', ['type']),
  }),
  'io.k8s.api.apps.v1.ReplicaSet': kind('ReplicaSet keeps a number of identical pods running. Usually managed by a Deployment.', {
    spec: object(SPEC, {
      replicas: int('The number of pods wanted. Defaults to 1.'),
      selector: ref(`${META}.LabelSelector`, 'Selects the pods counted as replicas; must match the template.'),
      template: ref(`${CORE}.PodTemplateSpec`, 'The pods to create when there are too few.'),
      minReadySeconds: int('Seconds a pod must be ready to count as available.'),
    }, ['selector']),
    status: free(STATUS),
  }),
  'io.k8s.api.apps.v1.DaemonSet': kind('DaemonSet runs one copy of a pod on every (selected) node.', {
    spec: object(SPEC, {
      selector: ref(`${META}.LabelSelector`, 'Selects the pods the daemon set manages; must match the template.'),
      template: ref(`${CORE}.PodTemplateSpec`, 'The pod to run on each node.'),
      updateStrategy: object('How pods are replaced when the template changes.', {
        type: str('RollingUpdate (default) or OnDelete.'),
        rollingUpdate: object('Bounds of a rolling update.', { maxUnavailable: intOrString('Nodes whose pod may be unavailable at once (1 by default).'), maxSurge: intOrString('Nodes that may run an old and a new pod at once.') }),
      }),
      minReadySeconds: int('Seconds a pod must be ready to count as available.'),
      revisionHistoryLimit: int('How many old revisions to keep (10 by default).'),
    }, ['selector', 'template']),
    status: free(STATUS),
  }),
  'io.k8s.api.apps.v1.StatefulSet': kind('StatefulSet runs pods with stable identities (name-0, name-1, ...) and stable storage, created and replaced in order.', {
    spec: object(SPEC, {
      replicas: int('The number of pods wanted. Defaults to 1.'),
      serviceName: str('The headless service that gives the pods their network identity.'),
      selector: ref(`${META}.LabelSelector`, 'Selects the pods; must match the template.'),
      template: ref(`${CORE}.PodTemplateSpec`, 'The pods to create.'),
      volumeClaimTemplates: { type: 'array', items: free('A PersistentVolumeClaim template.'), description: 'Claims each pod gets its own copy of.' },
      podManagementPolicy: str('OrderedReady (default) or Parallel.'),
      updateStrategy: object('How pods are replaced when the template changes.', {
        type: str('RollingUpdate (default) or OnDelete.'),
        rollingUpdate: object('Bounds of a rolling update.', { partition: int('Only pods with an ordinal at least this are updated.'), maxUnavailable: intOrString('Pods that may be unavailable at once.') }),
      }),
      persistentVolumeClaimRetentionPolicy: object('What happens to the claims when the set is deleted or scaled down.', { whenDeleted: str('Retain (default) or Delete.'), whenScaled: str('Retain (default) or Delete.') }),
      ordinals: object('How pods are numbered.', { start: int('The first ordinal (0 by default).') }),
      minReadySeconds: int('Seconds a pod must be ready to count as available.'),
      revisionHistoryLimit: int('How many old revisions to keep (10 by default).'),
    }, ['selector', 'template']),
    status: free(STATUS),
  }),
  'io.k8s.api.batch.v1.Job': kind('Job runs pods until a number of them complete successfully.', {
    spec: ref('io.k8s.api.batch.v1.JobSpec', SPEC),
    status: free(STATUS),
  }),
  'io.k8s.api.batch.v1.JobSpec': object('What a job runs, and how many of its pods must succeed.', {
    template: ref(`${CORE}.PodTemplateSpec`, 'The pods to run; restartPolicy must be Never or OnFailure.'),
    completions: int('How many pods must succeed (1 by default).'),
    parallelism: int('How many pods may run at once (1 by default).'),
    backoffLimit: int('Retries before the job is marked failed (6 by default).'),
    activeDeadlineSeconds: int('Seconds the job may run before it is terminated.', 'int64'),
    ttlSecondsAfterFinished: int('Seconds after finishing before the job is deleted automatically.'),
    selector: ref(`${META}.LabelSelector`, 'Selects the pods of the job; generated unless manualSelector is set.'),
    manualSelector: bool('Whether selector is set by hand instead of generated.'),
    completionMode: str('NonIndexed (default) or Indexed.'),
    suspend: bool('Whether the job is suspended: no pods are created, running ones are deleted.'),
    podFailurePolicy: free('How pod failures count towards backoffLimit.'),
    backoffLimitPerIndex: int('Retries per index, for Indexed jobs.'),
  }, ['template']),
  'io.k8s.api.batch.v1.CronJob': kind('CronJob runs a Job on a schedule.', {
    spec: ref('io.k8s.api.batch.v1.CronJobSpec', SPEC),
    status: ref('io.k8s.api.batch.v1.CronJobStatus', STATUS),
  }),
  'io.k8s.api.batch.v1.CronJobSpec': object('When a cron job runs, what it runs and how runs overlap.', {
    schedule: str('The schedule in cron format (five fields, or @hourly, @daily, @every 1h, ...).'),
    timeZone: str('The IANA time zone the schedule is read in (the controller manager\'s own when unset).'),
    startingDeadlineSeconds: int('Seconds after its scheduled time a missed run may still start.', 'int64'),
    concurrencyPolicy: str('Allow (default), Forbid (skip a run while one is active) or Replace (the new run replaces the active one).', { enum: ['Allow', 'Forbid', 'Replace'] }),
    suspend: bool('When true, no further runs start (false by default).'),
    jobTemplate: object('The Job each run creates.', {
      metadata: ref(`${META}.ObjectMeta`, 'Labels and annotations the Jobs get.'),
      spec: ref('io.k8s.api.batch.v1.JobSpec', 'The Jobs\' spec.'),
    }),
    successfulJobsHistoryLimit: int('How many finished successful Jobs to keep (3 by default).'),
    failedJobsHistoryLimit: int('How many failed Jobs to keep (1 by default).'),
  }, ['schedule', 'jobTemplate']),
  'io.k8s.api.batch.v1.CronJobStatus': object('The observed state of a cron job.', {
    active: { type: 'array', items: ref(`${CORE}.ObjectReference`), description: 'The Jobs running now.', 'x-kubernetes-list-type': 'atomic' },
    lastScheduleTime: time('When a Job was last scheduled to run.'),
    lastSuccessfulTime: time('When a Job last completed successfully.'),
  }),
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler': kind('HorizontalPodAutoscaler sets the replicas of a scalable workload from the metrics of its pods.', {
    spec: ref('io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec', SPEC),
    status: ref('io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus', STATUS),
  }),
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec': object('What is scaled, within which bounds, on which metrics.', {
    scaleTargetRef: ref('io.k8s.api.autoscaling.v2.CrossVersionObjectReference', 'The workload scaled (through its scale subresource).'),
    minReplicas: int('The fewest replicas (1 by default).'),
    maxReplicas: int('The most replicas.'),
    metrics: { type: 'array', items: free('A metric and its target: type Resource (cpu or memory of the pods, as Utilization of their requests or an AverageValue), ContainerResource, Pods, Object or External.'), description: 'The metrics the replica count follows (cpu at 80% of requests when none is named); the largest count any of them asks for wins.', 'x-kubernetes-list-type': 'atomic' },
    behavior: free('How fast to scale up and down: scaleUp and scaleDown, each with a stabilizationWindowSeconds, a selectPolicy and policies (type Pods or Percent, value, periodSeconds).'),
  }, ['scaleTargetRef', 'maxReplicas']),
  'io.k8s.api.autoscaling.v2.CrossVersionObjectReference': object('The object scaled.', {
    apiVersion: str('Its API version.'),
    kind: str('Its kind.'),
    name: str('Its name.'),
  }, ['kind', 'name']),
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus': object('What the autoscaler last saw and did.', {
    observedGeneration: int('The generation it last acted on.', 'int64'),
    lastScaleTime: time('When it last changed the replica count.'),
    currentReplicas: int('The replicas the target had.'),
    desiredReplicas: int('The replicas it wants.'),
    currentMetrics: { type: 'array', items: free('A metric\'s current value.'), description: 'The metrics as last read.', 'x-kubernetes-list-type': 'atomic' },
    conditions: { type: 'array', items: free('AbleToScale, ScalingActive or ScalingLimited, with a reason and message.'), description: 'Why it scales as it does.' },
  }),
  'io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler': kind('HorizontalPodAutoscaler (autoscaling/v1): a CPU-only view of the same object; other metrics and the behavior are in autoscaling.alpha.kubernetes.io annotations.', {
    spec: object('What is scaled, within which bounds, to which CPU utilization.', {
      scaleTargetRef: ref('io.k8s.api.autoscaling.v2.CrossVersionObjectReference', 'The workload scaled.'),
      minReplicas: int('The fewest replicas (1 by default).'),
      maxReplicas: int('The most replicas.'),
      targetCPUUtilizationPercentage: int('The average CPU utilization of the pods\' requests aimed at.'),
    }, ['scaleTargetRef', 'maxReplicas']),
    status: object('What the autoscaler last saw and did.', {
      observedGeneration: int('The generation it last acted on.', 'int64'),
      lastScaleTime: time('When it last changed the replica count.'),
      currentReplicas: int('The replicas the target had.'),
      desiredReplicas: int('The replicas it wants.'),
      currentCPUUtilizationPercentage: int('The pods\' average CPU utilization of their requests.'),
    }),
  }),
};
