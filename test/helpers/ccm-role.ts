// The cloud controller manager's ClusterRole as the Kubernetes documentation gives it
// ("Cloud Controller Manager Administration"), as YAML rules: the access-control test grants it to
// a service account, and the CCM's RBAC test checks the payload's CCM ClusterRole against it (it
// plus only what a current CCM also needs) before running the CCM with exactly the payload's rules.
export const CCM_DOCUMENTED_RULES = `- apiGroups: [""]
  resources: [events]
  verbs: [create, patch, update]
- apiGroups: [""]
  resources: [nodes]
  verbs: ["*"]
- apiGroups: [""]
  resources: [nodes/status]
  verbs: [patch]
- apiGroups: [""]
  resources: [services]
  verbs: [list, patch, update, watch]
- apiGroups: [""]
  resources: [serviceaccounts]
  verbs: [create]
- apiGroups: [""]
  resources: [persistentvolumes]
  verbs: [get, list, update, watch]
- apiGroups: [""]
  resources: [endpoints]
  verbs: [create, get, list, watch, update]
`;
