// OpenAPI v3 schemas of the built-in kinds this server serves, for `kubectl explain` and for
// clients that read /openapi/v3: compact, hand-written (the fields people read and write, with
// descriptions in our own words), named as Kubernetes names its definitions
// (`io.k8s.api.core.v1.ConfigMap`). Kinds without a schema here get a generic one.

export type Schema = Record<string, unknown>;

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const CORE = 'io.k8s.api.core.v1';

// Small constructors, in the shape kube-apiserver publishes (references wrapped in allOf so that
// a field can carry its own description).
const ref = (name: string, description?: string): Schema => ({ allOf: [{ $ref: `#/components/schemas/${name}` }], default: {}, ...(description ? { description } : {}) });
const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const int = (description: string, format = 'int32'): Schema => ({ type: 'integer', format, description });
const bool = (description: string): Schema => ({ type: 'boolean', description });
const time = (description: string): Schema => ({ type: 'string', format: 'date-time', description });
const intOrString = (description: string): Schema => ({ type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true, description });
const strings = (description: string): Schema => ({ type: 'array', items: { type: 'string', default: '' }, description });
const stringMap = (description: string): Schema => ({ type: 'object', additionalProperties: { type: 'string', default: '' }, description });
// Keyed lists carry the strategic-merge metadata too: kubectl builds its apply patches from it.
const list = (item: string, description: string, keys?: string[], strategy = 'merge'): Schema => ({
  type: 'array', items: { allOf: [{ $ref: `#/components/schemas/${item}` }], default: {} }, description,
  ...(keys ? { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys, 'x-kubernetes-patch-merge-key': keys[0], 'x-kubernetes-patch-strategy': strategy } : {}),
});
const free = (description: string): Schema => ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, description });
const object = (description: string, properties: Record<string, Schema>, required?: string[]): Schema => ({
  type: 'object', description, properties, ...(required ? { required } : {}),
});

/** apiVersion, kind and metadata, as every top-level kind has them. */
function typeMeta(): Record<string, Schema> {
  return {
    apiVersion: str('The versioned schema of this object (group/version). The server converts recognised versions and may reject others.'),
    kind: str('The REST resource this object represents, in CamelCase. Servers may infer it from the endpoint the client writes to; it cannot be changed.'),
    metadata: ref(`${META}.ObjectMeta`, "Standard object metadata: name, namespace, labels, annotations, owners and the server's bookkeeping."),
  };
}

function kind(description: string, properties: Record<string, Schema>): Schema {
  return object(description, { ...typeMeta(), ...properties });
}

const SPEC = 'The desired behaviour, as the user or a controller declares it.';
const STATUS = 'The most recently observed state, written by the system; it may lag behind. Read-only for users.';

/** The definitions: name → schema. Top-level kinds carry their x-kubernetes-group-version-kind when published. */
export const BUILTIN_SCHEMAS: Record<string, Schema> = {
  // --- meta/v1 -------------------------------------------------------------------------------
  [`${META}.ObjectMeta`]: object('Metadata every persisted resource has.', {
    name: str('Unique name within a namespace (or the cluster, for cluster-scoped kinds). Required when creating, unless generateName is set. Cannot be updated.'),
    generateName: str('A prefix the server uses to make up a unique name when name is empty: five random characters are appended.'),
    namespace: str('The namespace the object lives in; empty for cluster-scoped kinds. Must be a DNS label. Cannot be updated.'),
    uid: str('A value unique in time and space that the server assigns on create. Read-only.'),
    resourceVersion: str('An opaque value that changes on every write, for optimistic concurrency and watches. Clients pass it back unchanged. Read-only.'),
    generation: int('A sequence number of changes to the desired state, set by the server. Read-only.', 'int64'),
    creationTimestamp: time('When the server created this object (UTC). Read-only.'),
    deletionTimestamp: time('When this object will be deleted: set by the server when a deletion is requested while finalizers remain. Read-only.'),
    deletionGracePeriodSeconds: int('Seconds the object is allowed to terminate gracefully before it is removed. Read-only.', 'int64'),
    labels: stringMap('Key/value pairs used to organise and select objects (label selectors).'),
    annotations: stringMap('Key/value pairs for arbitrary, non-identifying data that tools and controllers store with the object.'),
    ownerReferences: list(`${META}.OwnerReference`, 'The objects this one depends on. When every owner is gone, the garbage collector removes this object. At most one owner may be the managing controller.', ['uid']),
    finalizers: { ...strings('Conditions that must be cleared before the object is deleted: the object stays, with deletionTimestamp set, until this list is empty.'), 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' },
    managedFields: list(`${META}.ManagedFieldsEntry`, 'Which field manager owns which fields, and by which operation (Apply or Update). Maintained by the server for server-side apply.'),
  }),
  [`${META}.OwnerReference`]: object('Identifies an owner of an object: enough to find it, in the same namespace.', {
    apiVersion: str('API version of the owner.'),
    kind: str('Kind of the owner.'),
    name: str('Name of the owner.'),
    uid: str('UID of the owner.'),
    controller: bool('True when the owner is the managing controller of this object.'),
    blockOwnerDeletion: bool('When true, and the owner has the foregroundDeletion finalizer, the owner cannot be removed before this object is.'),
  }, ['apiVersion', 'kind', 'name', 'uid']),
  [`${META}.ManagedFieldsEntry`]: object('The fields one manager manages, through one operation and API version.', {
    manager: str('The name of the field manager (the fieldManager of its requests, or the client program).'),
    operation: str('The operation that made this entry: Apply or Update.'),
    apiVersion: str('The API version the fields are expressed in.'),
    time: time('When the fields of this entry last changed.'),
    fieldsType: str('The format of fieldsV1; only "FieldsV1" exists.'),
    fieldsV1: { type: 'object', description: 'The set of fields, as a tree of f:<name>, k:<key> and v:<value> elements.' },
    subresource: str('The subresource the write went to (for example "status"); empty for the main resource.'),
  }),
  [`${META}.LabelSelector`]: object('Selects objects by label: every matchLabels pair and every matchExpressions requirement must hold. An empty selector matches everything; a null one matches nothing.', {
    matchLabels: stringMap('Labels that must be present with exactly these values.'),
    matchExpressions: list(`${META}.LabelSelectorRequirement`, 'Requirements on labels, all of which must hold.'),
  }),
  [`${META}.LabelSelectorRequirement`]: object('A requirement on one label key.', {
    key: str('The label key.'),
    operator: str('How the key relates to the values: In, NotIn, Exists or DoesNotExist.'),
    values: strings('The values for In and NotIn (non-empty); empty for Exists and DoesNotExist.'),
  }, ['key', 'operator']),
  [`${META}.Condition`]: object('One aspect of the current state of an object.', {
    type: str('The type of condition, in CamelCase.'),
    status: str('True, False or Unknown.'),
    observedGeneration: int('The metadata.generation the condition was based on.', 'int64'),
    lastTransitionTime: time('When the status last changed.'),
    reason: str('A CamelCase, machine-readable reason for the last transition.'),
    message: str('A human-readable explanation of the last transition.'),
  }, ['type', 'status', 'lastTransitionTime', 'reason', 'message']),

  // --- core/v1 -------------------------------------------------------------------------------
  [`${CORE}.ConfigMap`]: kind('ConfigMap holds configuration data, as strings or bytes, for pods and controllers to consume.', {
    data: stringMap('Configuration data as UTF-8 strings. Keys must consist of alphanumerics, "-", "_" or ".". Keys may not also appear in binaryData.'),
    binaryData: { type: 'object', additionalProperties: { type: 'string', format: 'byte' }, description: 'Configuration data as bytes (base64 in JSON and YAML). Keys may not also appear in data.' },
    immutable: bool('When true, data and binaryData can no longer change; only metadata can. The object can still be deleted.'),
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
  [`${CORE}.Pod`]: kind('Pod is a group of containers that run together on one node, sharing network and volumes. Pods are created by users or controllers and scheduled onto nodes.', {
    spec: ref(`${CORE}.PodSpec`, SPEC),
    status: ref(`${CORE}.PodStatus`, STATUS),
  }),
  [`${CORE}.PodSpec`]: object('The desired state of a pod.', {
    containers: list(`${CORE}.Container`, 'The containers of the pod: at least one. Cannot be updated.', ['name']),
    initContainers: list(`${CORE}.Container`, 'Containers that run one after another, each to completion, before the regular containers start.', ['name']),
    volumes: list(`${CORE}.Volume`, 'Volumes the containers of the pod can mount.', ['name'], 'merge,retainKeys'),
    nodeName: str('The node the pod is bound to. Set by the scheduler; setting it directly bypasses scheduling.'),
    nodeSelector: stringMap('Labels a node must have for the pod to be scheduled onto it.'),
    serviceAccountName: str('The service account the pod runs as (default when not set).'),
    restartPolicy: str('When containers are restarted: Always (default), OnFailure or Never.', { enum: ['Always', 'Never', 'OnFailure'] }),
    terminationGracePeriodSeconds: int('Seconds the pod gets to stop gracefully after it is asked to (30 by default).', 'int64'),
    dnsPolicy: str('How the pod resolves names: ClusterFirst (default), ClusterFirstWithHostNet, Default or None.', { enum: ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'] }),
    hostNetwork: bool("Whether the pod uses the node's network namespace."),
    schedulerName: str('The scheduler that places the pod (default-scheduler when not set).'),
    priorityClassName: str('The PriorityClass that gives the pod its scheduling priority.'),
    tolerations: list(`${CORE}.Toleration`, 'Taints of nodes that the pod tolerates.'),
    affinity: ref(`${CORE}.Affinity`, 'Scheduling constraints: node affinity, pod affinity and anti-affinity.'),
    securityContext: ref(`${CORE}.PodSecurityContext`, 'Security attributes for every container of the pod; containers can override some of them.'),
    imagePullSecrets: list(`${CORE}.LocalObjectReference`, 'Secrets used to pull the images of the pod.', ['name']),
    ephemeralContainers: list(`${CORE}.Container`, 'Containers added to a running pod for debugging (kubectl debug); never restarted.', ['name']),
    hostAliases: list(`${CORE}.HostAlias`, "Entries added to the pod's /etc/hosts.", ['ip']),
    topologySpreadConstraints: list(`${CORE}.TopologySpreadConstraint`, 'How the pods of a group spread across topology domains (zones, nodes).', ['topologyKey', 'whenUnsatisfiable']),
    dnsConfig: ref(`${CORE}.PodDNSConfig`, 'DNS settings merged with those the dnsPolicy produces.'),
    readinessGates: { type: 'array', items: free('A pod condition type.'), description: 'Extra pod conditions that must be True for the pod to be ready.' },
    schedulingGates: list(`${CORE}.LocalObjectReference`, 'Gates that hold the pod back from scheduling while any remains.', ['name']),
    overhead: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'Resources the pod sandbox itself uses, added to the requests of the containers.' },
    os: object('The operating system the pod needs.', { name: str('linux or windows.') }, ['name']),
    hostname: str('The hostname of the pod (its name by default).'),
    subdomain: str('Makes the pod <hostname>.<subdomain>.<namespace>.svc resolvable through a headless service of that name.'),
    hostPID: bool("Whether the pod uses the node's process namespace."),
    hostIPC: bool("Whether the pod uses the node's IPC namespace."),
    shareProcessNamespace: bool('Whether the containers of the pod share one process namespace.'),
    automountServiceAccountToken: bool('Whether an API token is mounted into the pod.'),
    enableServiceLinks: bool('Whether environment variables describing services are injected (true by default).'),
    activeDeadlineSeconds: int('Seconds the pod may be active before it is failed.', 'int64'),
    priority: int('The scheduling priority, resolved from priorityClassName.'),
    preemptionPolicy: str('Whether the pod may preempt lower-priority pods: PreemptLowerPriority (default) or Never.'),
    runtimeClassName: str('The RuntimeClass that runs the pod.'),
    serviceAccount: str('Deprecated alias of serviceAccountName.'),
    setHostnameAsFQDN: bool("Whether the pod's hostname is its fully qualified domain name."),
  }, ['containers']),
  [`${CORE}.Affinity`]: object('Where a pod may or prefers to be scheduled, relative to node labels and to other pods.', {
    nodeAffinity: object('Constraints on the labels of the node.', {
      requiredDuringSchedulingIgnoredDuringExecution: object('Node selector terms of which one must match for the pod to be scheduled.', {
        nodeSelectorTerms: { type: 'array', items: free('A node selector term: matchExpressions and matchFields, all of which must hold.'), description: 'The terms, ORed.' },
      }, ['nodeSelectorTerms']),
      preferredDuringSchedulingIgnoredDuringExecution: { type: 'array', items: free('A weighted node selector term.'), description: 'Terms the scheduler prefers, by weight.' },
    }),
    podAffinity: ref(`${CORE}.PodAffinity`, 'Pods this pod should run near (in the same topology domain).'),
    podAntiAffinity: ref(`${CORE}.PodAffinity`, 'Pods this pod should not run near.'),
  }),
  [`${CORE}.PodAffinity`]: object('Placement of a pod relative to other pods.', {
    requiredDuringSchedulingIgnoredDuringExecution: { type: 'array', items: free('A pod affinity term: a label selector and a topology key.'), description: 'Terms that must hold when the pod is scheduled.' },
    preferredDuringSchedulingIgnoredDuringExecution: { type: 'array', items: free('A weighted pod affinity term.'), description: 'Terms the scheduler prefers, by weight.' },
  }),
  [`${CORE}.PodSecurityContext`]: object('Security attributes that apply to every container of a pod.', {
    runAsUser: int('The UID to run the entrypoints as.', 'int64'),
    runAsGroup: int('The GID to run the entrypoints as.', 'int64'),
    runAsNonRoot: bool('When true, containers must run as a non-root user (checked at start).'),
    fsGroup: int('A supplementary group for every container; volumes that support it are owned by this group.', 'int64'),
    fsGroupChangePolicy: str('When volume ownership is changed: OnRootMismatch or Always.'),
    supplementalGroups: { type: 'array', items: { type: 'integer', format: 'int64' }, description: 'More groups for the first process of each container.' },
    sysctls: { type: 'array', items: free('A sysctl name and value.'), description: 'Namespaced sysctls set for the pod.' },
    seLinuxOptions: ref(`${CORE}.SELinuxOptions`, 'The SELinux context of every container.'),
    seccompProfile: ref(`${CORE}.SeccompProfile`, 'The seccomp profile of every container.'),
    appArmorProfile: ref(`${CORE}.SeccompProfile`, 'The AppArmor profile of every container.'),
    windowsOptions: free('Windows-specific options.'),
  }),
  [`${CORE}.SecurityContext`]: object('Security options of one container; they override those of the pod.', {
    privileged: bool('Run as privileged: the same as root on the host.'),
    allowPrivilegeEscalation: bool('Whether a process can gain more privileges than its parent (no_new_privs).'),
    readOnlyRootFilesystem: bool('Mount the root filesystem read-only.'),
    runAsUser: int('The UID to run the entrypoint as.', 'int64'),
    runAsGroup: int('The GID to run the entrypoint as.', 'int64'),
    runAsNonRoot: bool('When true, the container must run as a non-root user.'),
    capabilities: object('Linux capabilities to add to or drop from the defaults of the runtime.', {
      add: strings('Capabilities to add.'),
      drop: strings('Capabilities to drop (ALL for every one).'),
    }),
    procMount: str('Default or Unmasked /proc.'),
    seLinuxOptions: ref(`${CORE}.SELinuxOptions`, 'The SELinux context of the container.'),
    seccompProfile: ref(`${CORE}.SeccompProfile`, 'The seccomp profile of the container.'),
    appArmorProfile: ref(`${CORE}.SeccompProfile`, 'The AppArmor profile of the container.'),
    windowsOptions: free('Windows-specific options.'),
  }),
  [`${CORE}.SELinuxOptions`]: object('An SELinux label.', {
    user: str('The SELinux user.'), role: str('The SELinux role.'), type: str('The SELinux type.'), level: str('The SELinux level.'),
  }),
  [`${CORE}.SeccompProfile`]: object('A seccomp or AppArmor profile.', {
    type: str('RuntimeDefault, Unconfined or Localhost.'),
    localhostProfile: str('For Localhost: the profile on the node.'),
  }, ['type']),
  [`${CORE}.HostAlias`]: object('Host names for one IP address in /etc/hosts.', { ip: str('The IP address.'), hostnames: strings('Host names for it.') }, ['ip']),
  [`${CORE}.TopologySpreadConstraint`]: object('How pods spread across a topology.', {
    maxSkew: int('The largest allowed difference in matching pods between two domains.'),
    topologyKey: str('The node label whose values are the domains.'),
    whenUnsatisfiable: str('DoNotSchedule or ScheduleAnyway.'),
    labelSelector: ref(`${META}.LabelSelector`, 'The pods counted.'),
    minDomains: int('The least number of eligible domains.'),
    matchLabelKeys: strings('Label keys whose values on the incoming pod narrow the selector.'),
    nodeAffinityPolicy: str('Honor or Ignore the node affinity of the pod when counting.'),
    nodeTaintsPolicy: str('Honor or Ignore node taints when counting.'),
  }, ['maxSkew', 'topologyKey', 'whenUnsatisfiable']),
  [`${CORE}.PodDNSConfig`]: object('DNS settings of a pod.', {
    nameservers: strings('Name server IP addresses.'),
    searches: strings('Search domains.'),
    options: { type: 'array', items: free('A resolver option: name and value.'), description: 'Resolver options.' },
  }),
  [`${CORE}.Probe`]: object('A check run against a container: exactly one of exec, httpGet, tcpSocket or grpc.', {
    exec: object('Runs a command in the container; exit status 0 is success.', { command: strings('The command and its arguments (not run in a shell).') }),
    httpGet: ref(`${CORE}.HTTPGetAction`, 'An HTTP GET; a status from 200 to 399 is success.'),
    tcpSocket: object('Opens a TCP connection; success when it connects.', { port: intOrString('Port number or name.'), host: str("Host to connect to (the pod's IP by default).") }, ['port']),
    grpc: object('A gRPC health check.', { port: int('The port.'), service: str('The service name in the health check request.') }, ['port']),
    initialDelaySeconds: int('Seconds after the container starts before the first check.'),
    timeoutSeconds: int('Seconds after which a check times out (1 by default).'),
    periodSeconds: int('Seconds between checks (10 by default).'),
    successThreshold: int('Consecutive successes to count as passing after a failure (1 by default).'),
    failureThreshold: int('Consecutive failures to count as failing (3 by default).'),
    terminationGracePeriodSeconds: int("Grace period when the probe fails, overriding the pod's.", 'int64'),
  }),
  [`${CORE}.HTTPGetAction`]: object('An HTTP GET request.', {
    path: str('The path.'),
    port: intOrString('Port number or name.'),
    host: str("Host name (the pod's IP by default)."),
    scheme: str('HTTP (default) or HTTPS.'),
    httpHeaders: { type: 'array', items: free('A header: name and value.'), description: 'Custom request headers.' },
  }, ['port']),
  [`${CORE}.LifecycleHandler`]: object('An action run at a point in the life of a container.', {
    exec: object('Runs a command in the container.', { command: strings('The command and its arguments.') }),
    httpGet: ref(`${CORE}.HTTPGetAction`, 'An HTTP GET.'),
    tcpSocket: object('Deprecated: a TCP connection.', { port: intOrString('Port number or name.'), host: str('Host.') }),
    sleep: object('Sleeps.', { seconds: int('Seconds to sleep.', 'int64') }, ['seconds']),
  }),
  [`${CORE}.Container`]: object('One container of a pod.', {
    name: str('The name of the container: a DNS label, unique within the pod. Cannot be updated.'),
    image: str('The container image to run.'),
    command: strings("The entrypoint, replacing the image's ENTRYPOINT. Not run in a shell."),
    args: strings("Arguments to the entrypoint, replacing the image's CMD."),
    workingDir: str("The working directory (the image's default when not set)."),
    env: list(`${CORE}.EnvVar`, 'Environment variables to set in the container.', ['name']),
    ports: list(`${CORE}.ContainerPort`, 'Ports the container exposes (informational; any port the process listens on is reachable).', ['containerPort', 'protocol']),
    resources: ref(`${CORE}.ResourceRequirements`, 'Compute resources the container requests and is limited to.'),
    volumeMounts: list(`${CORE}.VolumeMount`, "Volumes of the pod to mount into the container's filesystem.", ['mountPath']),
    imagePullPolicy: str('When to pull the image: Always, IfNotPresent or Never (Always for :latest, else IfNotPresent).', { enum: ['Always', 'IfNotPresent', 'Never'] }),
    livenessProbe: ref(`${CORE}.Probe`, 'A periodic check; the container is restarted when it fails.'),
    readinessProbe: ref(`${CORE}.Probe`, 'A periodic check; the pod receives service traffic only while it succeeds.'),
    startupProbe: ref(`${CORE}.Probe`, 'A check that must succeed before the other probes start.'),
    lifecycle: object('Actions the system runs when the container starts and before it stops.', {
      postStart: ref(`${CORE}.LifecycleHandler`, 'Runs right after the container is created.'),
      preStop: ref(`${CORE}.LifecycleHandler`, 'Runs before the container is terminated.'),
      stopSignal: str('The signal that stops the container.'),
    }),
    securityContext: ref(`${CORE}.SecurityContext`, 'Security options of this container (overriding those of the pod).'),
    envFrom: { type: 'array', items: free('A ConfigMap or Secret whose keys become variables, with an optional prefix.'), description: 'Sources of many environment variables at once.' },
    volumeDevices: list(`${CORE}.VolumeDevice`, 'Block devices the container uses.', ['devicePath']),
    terminationMessagePath: str('Where the container writes its termination message (/dev/termination-log by default).'),
    terminationMessagePolicy: str('File (default) or FallbackToLogsOnError.'),
    stdin: bool('Whether the container has a stdin buffer.'),
    stdinOnce: bool('Whether stdin closes after the first attach.'),
    tty: bool('Whether the container gets a TTY.'),
    restartPolicy: str('For init containers: Always makes it a sidecar that keeps running.'),
    resizePolicy: { type: 'array', items: free('A resource and what resizing it requires.'), description: 'How resources can be resized.' },
  }, ['name']),
  [`${CORE}.VolumeDevice`]: object('A block device mapped into a container.', {
    name: str('The name of a persistentVolumeClaim of the pod.'), devicePath: str('The path of the device in the container.'),
  }, ['name', 'devicePath']),
  [`${CORE}.EnvVar`]: object('An environment variable of a container.', {
    name: str('The name of the variable.'),
    value: str('The value; $(VAR) references to earlier variables are expanded.'),
    valueFrom: object('Where the value comes from, instead of value.', {
      configMapKeyRef: ref(`${CORE}.KeySelector`, 'A key of a ConfigMap.'),
      secretKeyRef: ref(`${CORE}.KeySelector`, 'A key of a Secret.'),
      fieldRef: object('A field of the pod: metadata.name, metadata.namespace, spec.nodeName, status.podIP...', { apiVersion: str('The API version of the field path (v1).'), fieldPath: str('The field.') }, ['fieldPath']),
      resourceFieldRef: object('A resource limit or request of a container.', { containerName: str('The container.'), resource: str('The resource (limits.cpu, requests.memory...).'), divisor: intOrString('The unit.') }, ['resource']),
    }),
  }, ['name']),
  [`${CORE}.KeySelector`]: object('One key of a ConfigMap or Secret in the same namespace.', {
    name: str('The name of the ConfigMap or Secret.'), key: str('The key.'), optional: bool('Whether it may be missing.'),
  }, ['key']),
  [`${CORE}.ContainerPort`]: object('A network port of a container.', {
    name: str('An IANA_SVC_NAME for the port, unique within the pod, that services can refer to.'),
    containerPort: int('The port number inside the container.'),
    protocol: str('UDP, TCP (default) or SCTP.', { enum: ['SCTP', 'TCP', 'UDP'] }),
    hostPort: int('The port to expose on the node as well, if any.'),
  }, ['containerPort']),
  [`${CORE}.ResourceRequirements`]: object('Compute resources of a container.', {
    limits: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The most of each resource the container may use.' },
    requests: { type: 'object', additionalProperties: intOrString('A quantity.'), description: 'The amount of each resource the container needs; used for scheduling. Defaults to the limits.' },
  }),
  [`${CORE}.VolumeMount`]: object('A volume mounted into a container.', {
    name: str('The name of a volume of the pod.'),
    mountPath: str('Where in the container the volume is mounted. Must not contain ":".'),
    readOnly: bool('Mount read-only (false by default).'),
    subPath: str('A path within the volume to mount instead of its root.'),
  }, ['name', 'mountPath']),
  [`${CORE}.Volume`]: object('A named volume of a pod, with exactly one source.', {
    name: str('The name of the volume: a DNS label, unique within the pod.'),
    configMap: object('The keys of a ConfigMap as files.', { name: str('The ConfigMap.'), items: { type: 'array', items: free('A key and the path to write it to.'), description: 'Only these keys, at these paths.' }, defaultMode: int('Mode bits of the files.'), optional: bool('Whether the ConfigMap may be missing.') }),
    secret: object('The keys of a Secret as files.', { secretName: str('The Secret.'), items: { type: 'array', items: free('A key and the path to write it to.'), description: 'Only these keys, at these paths.' }, defaultMode: int('Mode bits of the files.'), optional: bool('Whether the Secret may be missing.') }),
    emptyDir: object('An empty directory that lives as long as the pod.', { medium: str('"" (node storage) or Memory.'), sizeLimit: intOrString('The most it may hold.') }),
    hostPath: object('A file or directory of the node.', { path: str('The path on the node.'), type: str('What must be there: "", DirectoryOrCreate, Directory, FileOrCreate, File, Socket, CharDevice, BlockDevice.') }, ['path']),
    persistentVolumeClaim: object('A PersistentVolumeClaim in the same namespace.', { claimName: str('The claim.'), readOnly: bool('Mount read-only.') }, ['claimName']),
    projected: object('Several sources in one directory.', { sources: { type: 'array', items: free('A ConfigMap, Secret, downward API or service account token projection.'), description: 'The sources.' }, defaultMode: int('Mode bits of the files.') }),
    downwardAPI: object('Fields of the pod as files.', { items: { type: 'array', items: free('A field and the path to write it to.'), description: 'The files.' }, defaultMode: int('Mode bits of the files.') }),
    csi: object('A volume from a CSI driver.', { driver: str('The driver.'), readOnly: bool('Mount read-only.'), fsType: str('The filesystem type.'), volumeAttributes: stringMap('Driver-specific attributes.'), nodePublishSecretRef: ref(`${CORE}.LocalObjectReference`, 'A Secret for the driver.') }, ['driver']),
    nfs: object('An NFS export.', { server: str('The server.'), path: str('The exported path.'), readOnly: bool('Mount read-only.') }, ['server', 'path']),
    ephemeral: free('A volume provisioned for the pod from a claim template, deleted with it.'),
    image: object('An OCI image or artifact as a read-only volume.', { reference: str('The image.'), pullPolicy: str('Always, Never or IfNotPresent.') }),
  }, ['name']),
  [`${CORE}.Toleration`]: object('Lets a pod be scheduled onto (or stay on) nodes with a matching taint.', {
    key: str('The taint key to match; empty with operator Exists matches every taint.'),
    operator: str('Exists or Equal (default).', { enum: ['Equal', 'Exists'] }),
    value: str('The taint value to match, for Equal.'),
    effect: str('The taint effect to match (NoSchedule, PreferNoSchedule, NoExecute); empty matches all.', { enum: ['NoExecute', 'NoSchedule', 'PreferNoSchedule'] }),
    tolerationSeconds: int('For NoExecute: how long the pod stays bound after the taint appears (forever when not set).', 'int64'),
  }),
  [`${CORE}.PodStatus`]: object('The observed state of a pod.', {
    phase: str('Where the pod is in its lifecycle: Pending, Running, Succeeded, Failed or Unknown.', { enum: ['Failed', 'Pending', 'Running', 'Succeeded', 'Unknown'] }),
    conditions: list(`${CORE}.PodCondition`, 'The current service state of the pod (PodScheduled, Initialized, ContainersReady, Ready).', ['type']),
    message: str('A human-readable message on why the pod is in this condition.'),
    reason: str('A brief CamelCase reason for the pod being in this state.'),
    hostIP: str('The IP address of the node the pod runs on.'),
    podIP: str('The IP address of the pod.'),
    startTime: time('When the kubelet acknowledged the pod, before pulling images.'),
    containerStatuses: { type: 'array', items: free('The state of one container.'), description: 'One entry per container: its state, readiness and restart count.' },
    qosClass: str('The quality-of-service class from the resource requests and limits: Guaranteed, Burstable or BestEffort.', { enum: ['BestEffort', 'Burstable', 'Guaranteed'] }),
  }),
  [`${CORE}.PodCondition`]: object('One condition of a pod.', {
    type: str('The condition: PodScheduled, Initialized, ContainersReady, Ready...'),
    status: str('True, False or Unknown.'),
    lastProbeTime: time('When the condition was last probed.'),
    lastTransitionTime: time('When the status last changed.'),
    reason: str('A CamelCase reason for the last transition.'),
    message: str('A human-readable message about the last transition.'),
  }, ['type', 'status']),
  [`${CORE}.PodTemplateSpec`]: object('The pods a controller creates: their metadata and spec.', {
    metadata: ref(`${META}.ObjectMeta`, 'Metadata given to each pod (labels must match the selector).'),
    spec: ref(`${CORE}.PodSpec`, 'The spec of each pod.'),
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

  // --- apps/v1, batch/v1 -------------------------------------------------------------------------
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
    spec: object(SPEC, {
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
    status: free(STATUS),
  }),

  // --- coordination, events, policy ----------------------------------------------------------------
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

/** The definition name of each built-in kind, by group/version/kind. */
export function builtinSchemaName(group: string, version: string, kindName: string): string {
  const packages: Record<string, string> = {
    '': 'io.k8s.api.core', apps: 'io.k8s.api.apps', batch: 'io.k8s.api.batch', policy: 'io.k8s.api.policy',
    'events.k8s.io': 'io.k8s.api.events', 'coordination.k8s.io': 'io.k8s.api.coordination',
    'rbac.authorization.k8s.io': 'io.k8s.api.rbac', 'apiextensions.k8s.io': 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions',
  };
  return `${packages[group] ?? `io.k8s.api.${group.split('.')[0]}`}.${version}.${kindName}`;
}

/** A schema for a built-in kind this file does not describe: its standard parts, open otherwise. */
export function genericSchema(kindName: string): Schema {
  return kind(`${kindName}: this server does not publish a detailed schema for this kind.`, {
    spec: free(SPEC),
    status: free(STATUS),
  });
}

/** The standard parts of a custom resource's schema: apiVersion, kind and metadata. */
export function customResourceTypeMeta(): Record<string, Schema> {
  return typeMeta();
}
