// OpenAPI schemas of the core/v1 kinds other than Pods: ConfigMaps, Secrets, Namespaces,
// ServiceAccounts, Services, Endpoints, Nodes, Events, ResourceQuotas, LimitRanges and the references they share.
import { bool, CORE, free, int, intOrString, kind, list, META, object, ref, SPEC, STATUS, str, stringMap, strings, time, type Schema } from './builders.js';

export const CORE_V1_SCHEMAS: Record<string, Schema> = {
  [`${CORE}.ConfigMap`]: kind('ConfigMap holds configuration data, as strings or bytes, for pods and controllers to consume.', {
    data: stringMap('Configuration data as UTF-8 strings. Keys must consist of alphanumerics, "-", "_" or ".". Keys may not also appear in binaryData.'),
    binaryData: { type: 'object', additionalProperties: { type: 'string', format: 'byte' }, description: 'Configuration data as bytes (base64 in JSON and YAML). Keys may not also appear in data.' },
    immutable: bool('When true, data and binaryData can no longer change; only metadata can. The object can still be deleted.'),
  }),
  [`${CORE}.ResourceQuota`]: kind('ResourceQuota sets aggregate limits on what a namespace may use: object counts and compute resources.', {
    spec: object(SPEC, {
      hard: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The most of each named resource the namespace may use.' },
      scopes: strings('Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass or CrossNamespacePodAffinity: the quota counts only the pods in every scope.'),
      scopeSelector: object('Scopes as selector expressions (PriorityClass with values).', {
        matchExpressions: { type: 'array', items: object('One scope requirement.', { scopeName: str('The scope.'), operator: str('In, NotIn, Exists or DoesNotExist.'), values: strings('For In and NotIn.') }, ['scopeName', 'operator']), description: 'All must hold.' },
      }),
    }),
    status: object(STATUS, {
      hard: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The limits the quota enforces now.' },
      used: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'What the namespace uses now of each limited resource.' },
    }),
  }),
  [`${CORE}.LimitRange`]: kind('LimitRange sets defaults and bounds for the resources of each container or pod in a namespace.', {
    spec: object(SPEC, {
      limits: {
        type: 'array',
        description: 'The limits, by the type of object they apply to.',
        items: object('Limits of one type.', {
          type: str('Container, Pod or PersistentVolumeClaim.'),
          max: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The most of each resource.' },
          min: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The least of each resource.' },
          default: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The limit a container gets when it says none.' },
          defaultRequest: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The request a container gets when it says none.' },
          maxLimitRequestRatio: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The largest limit over request.' },
        }, ['type']),
      },
    }, ['limits']),
  }),
  [`${CORE}.Secret`]: kind('Secret holds a small amount of sensitive data, such as passwords, tokens or keys.', {
    data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' }, description: 'The secret values, base64-encoded in JSON and YAML. Keys must consist of alphanumerics, "-", "_" or ".".' },
    stringData: stringMap('Write-only convenience: plain-text values that the server encodes into data on write (overriding data for the same key). Never returned by reads.'),
    type: str('How the data is to be used (for example Opaque, kubernetes.io/tls, kubernetes.io/service-account-token); Opaque when not set.'),
    immutable: bool('When true, data can no longer change; only metadata can.'),
  }),
  [`${CORE}.Namespace`]: kind('Namespace gives names a scope: namespaced objects are unique by name within their namespace. Deleting a namespace deletes everything in it.', {
    spec: ref(`${CORE}.NamespaceSpec`, SPEC),
    status: ref(`${CORE}.NamespaceStatus`, STATUS),
  }),
  [`${CORE}.NamespaceSpec`]: object('The desired state of a namespace.', {
    finalizers: strings('Values that must be removed before the namespace can be removed from storage (kubernetes by default).'),
  }),
  [`${CORE}.NamespaceStatus`]: object('The observed state of a namespace.', {
    phase: str('Active, or Terminating while its contents are being deleted.', { enum: ['Active', 'Terminating'] }),
    conditions: list(`${META}.Condition`, 'The latest observations of the namespace.'),
  }),
  [`${CORE}.ServiceAccount`]: kind('ServiceAccount is an identity for processes running in pods; its tokens authenticate as system:serviceaccount:<namespace>:<name>.', {
    secrets: list(`${CORE}.ObjectReference`, 'Secrets in the same namespace that pods running as this account may use.', ['name']),
    imagePullSecrets: list(`${CORE}.LocalObjectReference`, 'Secrets used to pull images for pods that run as this account.'),
    automountServiceAccountToken: bool('Whether pods running as this account get an API token mounted automatically (pods can override it).'),
  }),
  [`${CORE}.ObjectReference`]: object('A reference to another object, precise enough to find it.', {
    apiVersion: str('API version of the referent.'),
    kind: str('Kind of the referent.'),
    name: str('Name of the referent.'),
    namespace: str('Namespace of the referent.'),
    uid: str('UID of the referent.'),
    resourceVersion: str('The resourceVersion of the referent this reference was made against.'),
    fieldPath: str('A field within the referent, for example spec.containers{name} for one container of a pod.'),
  }),
  [`${CORE}.LocalObjectReference`]: object('A reference to an object by name, in the same namespace.', {
    name: str('Name of the referent.'),
  }),
  [`${CORE}.Service`]: kind('Service gives a stable name and virtual IP to a set of pods chosen by a label selector, and balances connections across them.', {
    spec: ref(`${CORE}.ServiceSpec`, SPEC),
    status: free(STATUS),
  }),
  [`${CORE}.ServiceSpec`]: object('The desired state of a service.', {
    type: str('How the service is exposed: ClusterIP (default), NodePort, LoadBalancer or ExternalName.', { enum: ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] }),
    selector: stringMap('Pods with these labels receive the traffic. Without a selector, endpoints are managed by hand.'),
    ports: list(`${CORE}.ServicePort`, 'The ports the service exposes.', ['port', 'protocol']),
    clusterIP: str('The virtual IP of the service, allocated by the server unless set; "None" makes a headless service.'),
    clusterIPs: strings('The virtual IPs of the service, one per IP family; the first equals clusterIP.'),
    sessionAffinity: str('ClientIP keeps a client on one pod; None (default) does not.', { enum: ['ClientIP', 'None'] }),
    externalName: str('For type ExternalName: the DNS name the service is an alias (CNAME) for.'),
    sessionAffinityConfig: object('Settings of the session affinity.', { clientIP: object('ClientIP affinity.', { timeoutSeconds: int('How long a client sticks to a pod (10800 by default).') }) }),
    externalIPs: strings('IP addresses, routed to nodes, on which the service also accepts traffic.'),
    externalTrafficPolicy: str('Cluster (default) or Local: how traffic from outside reaches the endpoints.'),
    internalTrafficPolicy: str('Cluster (default) or Local: how traffic from inside the cluster reaches the endpoints.'),
    ipFamilies: strings('IPv4 and/or IPv6.'),
    ipFamilyPolicy: str('SingleStack, PreferDualStack or RequireDualStack.'),
    loadBalancerIP: str('Deprecated: an IP address requested from the load balancer.'),
    loadBalancerSourceRanges: strings('Client CIDRs the load balancer accepts.'),
    loadBalancerClass: str('The load balancer implementation.'),
    allocateLoadBalancerNodePorts: bool('Whether LoadBalancer services get node ports (true by default).'),
    healthCheckNodePort: int('The node port of the health check, for externalTrafficPolicy Local.'),
    publishNotReadyAddresses: bool('Whether endpoints include pods that are not ready.'),
    trafficDistribution: str('A preference for how traffic is distributed (PreferClose).'),
  }),
  [`${CORE}.ServicePort`]: object('One port of a service.', {
    name: str('The name of the port; required when there are several.'),
    protocol: str('TCP (default), UDP or SCTP.', { enum: ['SCTP', 'TCP', 'UDP'] }),
    port: int('The port the service listens on.'),
    targetPort: intOrString('The port (number or container port name) on the pods; port by default.'),
    nodePort: int('For NodePort and LoadBalancer: the port opened on every node, allocated unless set.'),
    appProtocol: str('The application protocol of the port (for example kubernetes.io/h2c).'),
  }, ['port']),
  [`${CORE}.Endpoints`]: kind('Endpoints lists the addresses that implement a service: for services with a selector, kept current by the system.', {
    subsets: { type: 'array', items: free('A set of addresses (ready and not ready) with the ports they serve.'), description: 'The address and port sets; the union is the full list of endpoints.' },
  }),
  [`${CORE}.Node`]: kind('Node is a machine that runs pods. Each node has a unique name in the cluster.', {
    spec: ref(`${CORE}.NodeSpec`, SPEC),
    status: ref(`${CORE}.NodeStatus`, STATUS),
  }),
  [`${CORE}.NodeSpec`]: object('The desired state of a node.', {
    podCIDR: str('The range of pod IP addresses assigned to the node.'),
    providerID: str('The ID of the node given by the cloud provider: <provider>://<id>.'),
    unschedulable: bool('When true, no new pods are scheduled onto the node (kubectl cordon).'),
    taints: list(`${CORE}.Taint`, 'Taints that repel pods which do not tolerate them.'),
    podCIDRs: strings('The pod IP ranges of the node, one per IP family.'),
    externalID: str('Deprecated.'),
  }),
  [`${CORE}.Taint`]: object('Marks a node so that pods which do not tolerate it keep away.', {
    key: str('The taint key.'),
    value: str('The taint value.'),
    effect: str('NoSchedule, PreferNoSchedule or NoExecute.', { enum: ['NoExecute', 'NoSchedule', 'PreferNoSchedule'] }),
    timeAdded: time('When a NoExecute taint was added.'),
  }, ['key', 'effect']),
  [`${CORE}.NodeStatus`]: object('The observed state of a node.', {
    capacity: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The total resources of the node.' },
    allocatable: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The resources available to pods (capacity minus reservations).' },
    conditions: list(`${CORE}.NodeCondition`, 'The current state of the node (Ready, MemoryPressure, DiskPressure, PIDPressure...).', ['type']),
    addresses: list(`${CORE}.NodeAddress`, 'Addresses of the node (InternalIP, ExternalIP, Hostname).', ['type']),
    nodeInfo: free('Versions and identifiers of the node: kubelet, container runtime, kernel, OS, machine ID.'),
  }),
  [`${CORE}.NodeCondition`]: object('One condition of a node.', {
    type: str('The condition: Ready, MemoryPressure, DiskPressure, PIDPressure, NetworkUnavailable.'),
    status: str('True, False or Unknown.'),
    lastHeartbeatTime: time('When the condition was last reported.'),
    lastTransitionTime: time('When the status last changed.'),
    reason: str('A CamelCase reason for the last transition.'),
    message: str('A human-readable message about the last transition.'),
  }, ['type', 'status']),
  [`${CORE}.NodeAddress`]: object('One address of a node.', {
    type: str('Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.'),
    address: str('The address.'),
  }, ['type', 'address']),
  [`${CORE}.Event`]: kind('Event reports something that happened to an object (core/v1; see events.k8s.io/v1 for the newer form). Events are kept for a limited time.', {
    involvedObject: ref(`${CORE}.ObjectReference`, 'The object the event is about.'),
    reason: str('A short CamelCase reason for the transition the event reports.'),
    message: str('A human-readable description.'),
    type: str('Normal or Warning.'),
    source: object('The component that reported the event.', { component: str('The component.'), host: str('The node it ran on.') }),
    firstTimestamp: time('When the event was first recorded.'),
    lastTimestamp: time('When it most recently happened.'),
    count: int('How many times it happened.'),
    eventTime: { type: 'string', format: 'date-time', description: 'When the event was first observed, with microseconds.' },
    action: str('What action was taken or failed.'),
    reportingComponent: str('The controller that emitted the event, for example kubernetes.io/kubelet.'),
    reportingInstance: str('The instance of that controller.'),
    related: ref(`${CORE}.ObjectReference`, 'A second object involved, if any.'),
  }),
};
