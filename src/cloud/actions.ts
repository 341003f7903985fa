// The local cloud's actions: what an identity may be allowed to do, one name per kind of request
// (as a cloud's IAM names its API actions). Every route of the API (api.ts) names the action it
// needs; the root identity holds `*`; the cloud-credential controller grants components named
// actions from this list only (never credentials:manage, which mints credentials).
export const CLOUD_ACTIONS = [
  'instances:describe', // list and read instances, the instance types and zones
  'instances:create',
  'instances:start',
  'instances:stop',
  'instances:reboot',
  'instances:terminate',
  'loadbalancers:describe',
  'loadbalancers:manage', // create, update, delete
  'routes:describe',
  'routes:manage',
  'credentials:manage', // identities and their credentials: the root's alone
] as const;

export type CloudAction = (typeof CLOUD_ACTIONS)[number];

/** Every action. */
export const ALL_ACTIONS = '*';

/** What only the root may hold: granting it would let a component mint itself anything. */
export const ROOT_ONLY_ACTIONS: readonly string[] = ['credentials:manage', ALL_ACTIONS];

export function isCloudAction(name: string): name is CloudAction {
  return (CLOUD_ACTIONS as readonly string[]).includes(name);
}

/** Whether an identity holding `granted` may perform `action`. */
export function allows(granted: readonly string[], action: CloudAction): boolean {
  return granted.includes(ALL_ACTIONS) || granted.includes(action);
}
