// OpenAPI schemas of the remaining built-in groups: Leases (coordination), Events (events.k8s.io),
// PodDisruptionBudgets (policy), PriorityClasses (scheduling), RBAC and CustomResourceDefinitions
// (apiextensions).
import { bool, CORE, free, int, intOrString, kind, list, META, object, ref, SPEC, STATUS, str, strings, type Schema } from './builders.js';

export const CLUSTER_SCHEMAS: Record<string, Schema> = {
  'io.k8s.api.coordination.v1.Lease': kind('Lease is a lightweight lock: leader election and node heartbeats use it.', {
    spec: ref('io.k8s.api.coordination.v1.LeaseSpec', SPEC),
  }),
  'io.k8s.api.coordination.v1.LeaseSpec': object('The state of a lease.', {
    holderIdentity: str('Who holds the lease.'),
    leaseDurationSeconds: int('How long candidates wait after the last renewal before they may take the lease.'),
    acquireTime: { type: 'string', format: 'date-time', description: 'When the current holder acquired the lease.' },
    renewTime: { type: 'string', format: 'date-time', description: 'When the holder last renewed the lease.' },
    leaseTransitions: int('How many times the lease changed holders.'),
  }),
  'io.k8s.api.events.v1.Event': kind('Event reports something that happened to an object (events.k8s.io/v1). Events are kept for a limited time.', {
    eventTime: { type: 'string', format: 'date-time', description: 'When the event was first observed. Required.' },
    reason: str('Why the action was taken, in CamelCase.'),
    note: str('A human-readable description of the status of this operation.'),
    type: str('Normal or Warning.'),
    regarding: ref(`${CORE}.ObjectReference`, 'The object this event is about.'),
    related: ref(`${CORE}.ObjectReference`, 'A second object involved, if any.'),
    action: str('What action was taken or failed, in CamelCase.'),
    reportingController: str('The controller that emitted the event.'),
    reportingInstance: str('The instance of that controller.'),
    series: object('Data about a series of repeating events.', { count: int('How many times it happened.'), lastObservedTime: { type: 'string', format: 'date-time', description: 'When it last happened.' } }),
  }),
  'io.k8s.api.policy.v1.PodDisruptionBudget': kind('PodDisruptionBudget limits how many pods of a set may be down at once through voluntary disruptions (evictions, drains).', {
    spec: ref('io.k8s.api.policy.v1.PodDisruptionBudgetSpec', SPEC),
    status: ref('io.k8s.api.policy.v1.PodDisruptionBudgetStatus', STATUS),
  }),
  'io.k8s.api.policy.v1.PodDisruptionBudgetSpec': object('The desired state of a disruption budget. Set minAvailable or maxUnavailable, not both.', {
    minAvailable: intOrString('Pods (or a percentage) that must stay available after an eviction.'),
    maxUnavailable: intOrString('Pods (or a percentage) that may be unavailable after an eviction.'),
    selector: ref(`${META}.LabelSelector`, 'The pods the budget covers. An empty selector covers every pod of the namespace.'),
    unhealthyPodEvictionPolicy: str('When pods that are not ready may be evicted: IfHealthyBudget (default) or AlwaysAllow.', { enum: ['AlwaysAllow', 'IfHealthyBudget'] }),
  }),
  'io.k8s.api.policy.v1.PodDisruptionBudgetStatus': object('The observed state of a disruption budget.', {
    observedGeneration: int('The generation this status was computed for.', 'int64'),
    disruptedPods: { type: 'object', additionalProperties: { type: 'string', format: 'date-time' }, description: 'Pods evicted but not yet gone, with the time of their eviction.' },
    disruptionsAllowed: int('How many more pods may be evicted now.'),
    currentHealthy: int('Covered pods that are healthy.'),
    desiredHealthy: int('Healthy pods the budget requires.'),
    expectedPods: int('Pods the budget covers in total.'),
    conditions: list(`${META}.Condition`, 'DisruptionAllowed, and why.', ['type']),
  }, ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']),

  // --- rbac.authorization.k8s.io/v1 ---------------------------------------------------------------
  'io.k8s.api.scheduling.v1.PriorityClass': kind('PriorityClass maps a name to the priority of the pods that name it: the scheduler places higher ones first.', {
    value: int('The priority pods of this class get; at most 1000000000 for classes users make.'),
    globalDefault: bool('Whether pods naming no class get this one. Only one class may be the default.'),
    description: str('What the class is for.'),
    preemptionPolicy: str('PreemptLowerPriority (default) or Never.', { enum: ['Never', 'PreemptLowerPriority'] }),
  }),
  'io.k8s.api.rbac.v1.PolicyRule': object('Actions allowed on resources or non-resource URLs. Rules only allow; nothing denies.', {
    verbs: strings('The verbs allowed (get, list, watch, create, update, patch, delete, deletecollection, or * for all).'),
    apiGroups: strings('The API groups of the resources ("" is the core group, * all).'),
    resources: strings('The resources (and resource/subresource) the rule covers; * for all.'),
    resourceNames: strings('When set, only the objects with these names.'),
    nonResourceURLs: strings('URL paths (a trailing * matches a prefix) for non-resource requests; only in ClusterRoles.'),
  }, ['verbs']),
  'io.k8s.api.rbac.v1.Subject': object('Who a binding grants to: a user, a group or a service account.', {
    kind: str('User, Group or ServiceAccount.'),
    apiGroup: str('rbac.authorization.k8s.io for User and Group; empty for ServiceAccount.'),
    name: str('The name of the subject.'),
    namespace: str('The namespace of a ServiceAccount.'),
  }, ['kind', 'name']),
  'io.k8s.api.rbac.v1.RoleRef': object('The role a binding grants.', {
    apiGroup: str('rbac.authorization.k8s.io.'),
    kind: str('Role or ClusterRole.'),
    name: str('The name of the role.'),
  }, ['apiGroup', 'kind', 'name']),
  'io.k8s.api.rbac.v1.Role': kind('Role is a set of rules within one namespace, granted by RoleBindings.', {
    rules: list('io.k8s.api.rbac.v1.PolicyRule', 'The rules of the role.'),
  }),
  'io.k8s.api.rbac.v1.ClusterRole': kind('ClusterRole is a set of rules usable in every namespace or cluster-wide, granted by RoleBindings or ClusterRoleBindings.', {
    rules: list('io.k8s.api.rbac.v1.PolicyRule', 'The rules of the role.'),
    aggregationRule: object('Builds the rules from other ClusterRoles chosen by label; the controller then owns rules.', {
      clusterRoleSelectors: { type: 'array', items: { allOf: [{ $ref: `#/components/schemas/${META}.LabelSelector` }], default: {} }, description: 'ClusterRoles whose rules are aggregated.' },
    }),
  }),
  'io.k8s.api.rbac.v1.RoleBinding': kind('RoleBinding grants the rules of a Role or ClusterRole to subjects, within its own namespace.', {
    subjects: list('io.k8s.api.rbac.v1.Subject', 'Who gets the rules.'),
    roleRef: ref('io.k8s.api.rbac.v1.RoleRef', 'The Role or ClusterRole granted. Cannot be updated.'),
  }),
  'io.k8s.api.rbac.v1.ClusterRoleBinding': kind('ClusterRoleBinding grants the rules of a ClusterRole to subjects, in every namespace and cluster-wide.', {
    subjects: list('io.k8s.api.rbac.v1.Subject', 'Who gets the rules.'),
    roleRef: ref('io.k8s.api.rbac.v1.RoleRef', 'The ClusterRole granted. Cannot be updated.'),
  }),

  // --- apiextensions.k8s.io/v1 ---------------------------------------------------------------------
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition': kind('CustomResourceDefinition adds a resource to the API: its group, names, versions and schemas. Its name must be <plural>.<group>.', {
    spec: ref('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec', 'The resource to serve.'),
    status: free('Conditions (NamesAccepted, Established), the accepted names and the versions ever stored.'),
  }),
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec': object('The resource a CRD adds.', {
    group: str('The API group of the resource (/apis/<group>/...). Must match the second part of the CRD name.'),
    names: object('The names of the resource.', {
      plural: str('The plural name, used in URLs: /apis/<group>/<version>/<plural>. Must be lowercase.'),
      singular: str('The singular name, for the CLI; the lowercased kind by default.'),
      kind: str('The CamelCase kind of the objects.'),
      listKind: str('The kind of lists; <kind>List by default.'),
      shortNames: strings('Short aliases for the CLI (kubectl get <shortname>).'),
      categories: strings('Groups of resources this one belongs to, such as all.'),
    }, ['plural', 'kind']),
    scope: str('Cluster or Namespaced.', { enum: ['Cluster', 'Namespaced'] }),
    versions: { type: 'array', description: 'The versions served; exactly one is the storage version.', items: object('One version of the resource.', {
      name: str('The version name, as in /apis/<group>/<version>.'),
      served: bool('Whether this version is served.'),
      storage: bool('Whether objects are stored at this version; exactly one version has it.'),
      deprecated: bool('Whether clients get a deprecation warning for this version.'),
      schema: object('The schema of the objects.', { openAPIV3Schema: free('An OpenAPI v3 structural schema: validation, pruning and defaulting of the objects.') }),
      subresources: free('The status and scale subresources, if any.'),
      additionalPrinterColumns: { type: 'array', items: free('A column: name, type, jsonPath, priority.'), description: 'Extra columns for kubectl get.' },
    }, ['name', 'served', 'storage']) },
    conversion: object('How objects convert between versions.', {
      strategy: str('None (only apiVersion changes) or Webhook.'),
      webhook: object('The conversion webhook.', {
        clientConfig: object('How to reach it.', { url: str('A URL.'), service: object('A service in the cluster.', { namespace: str('Namespace.'), name: str('Name.'), path: str('URL path.'), port: int('Port (443 by default).') }), caBundle: str('PEM CA bundle to verify it.', { format: 'byte' }) }),
        conversionReviewVersions: strings('ConversionReview versions the webhook accepts.'),
      }),
    }),
    preserveUnknownFields: bool('Legacy: keep fields the schema does not declare. Must be false in v1.'),
  }, ['group', 'names', 'scope', 'versions']),
};
