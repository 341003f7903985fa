// The operator-status library (library-go's clusteroperator status helpers): how every bosun
// operator reports itself to the cluster-version operator on its ClusterOperator.
//   - conditions: Available, Progressing, Degraded, Upgradeable, set on the operator's clock; a
//     condition's lastTransitionTime moves only when its status changes (conditions.ts);
//   - versions: `operator` (and any operand) at the release only once the operator is done
//     rolling it out; until then the versions already reported stay, so the CVO keeps waiting;
//   - relatedObjects: what `oc adm inspect` collects for the operator;
//   - degraded-on-error: each controller of the operator reports its syncs (Controller.reportTo);
//     after `after` consecutive failures of a key (at once for a TerminalError or an error
//     `immediate` picks) the controller is failing, and every write says Degraded=True with its
//     reason and message (several failing controllers: library-go's union, reasons
//     `<Controller>_<Reason>` joined by `::`, messages `<Controller>: <message>` one a line) until
//     the key syncs again;
//   - the release version (RELEASE_VERSION) from one place: the operator's own Deployment once the
//     CVO applied it (a process reporting on that Deployment's behalf), else its environment.
// The ClusterOperator is created when missing and its status is written through the status
// subresource, resourceVersion-checked, and only when it would change.
import { type KubeClient, isConflict } from './client.js';
import type * as api from '../api/index.js';
import { type Clock, realClock } from './clock.js';
import { type Condition, sameConditions, setCondition } from './conditions.js';
import type { SyncReporter } from './controller.js';
import type { Informer } from './informer.js';
import { resources } from './resources.js';

/** The environment variable an operator's Deployment names its release in. */
export const RELEASE_VERSION = 'RELEASE_VERSION';

export interface RelatedObject {
  group: string;
  resource: string;
  name: string;
  namespace?: string;
}

export interface OperandVersion {
  name: string;
  version: string;
}

/** The RELEASE_VERSION a Deployment's (first) container is given, if any. */
export function releaseVersionOf(deployment: api.Deployment | undefined): string | undefined {
  const env = deployment?.spec?.template?.spec?.containers?.[0]?.env ?? [];
  return env.find((e) => e.name === RELEASE_VERSION)?.value || undefined;
}

/** A command's release version: its flag, else $RELEASE_VERSION. */
export function releaseVersionFromEnvironment(flag?: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return (flag ?? env[RELEASE_VERSION]) || undefined;
}

/** As releaseVersionFromEnvironment, for an operator that cannot run without one. */
export function requireReleaseVersion(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  const version = releaseVersionFromEnvironment(flag, env);
  if (!version) throw new Error(`the release version is unknown: pass --release-version or set ${RELEASE_VERSION}`);
  return version;
}

export interface ReleaseVersionSource {
  /** The release this process was started with (flag or environment), or a function giving it. */
  version?: string | (() => string | undefined);
  /** The operator's own Deployment, for a process reporting on its behalf (an in-process bring-up):
   *  its RELEASE_VERSION wins once the CVO has applied it, so an update moves the report too. */
  deployment?: { informer: Pick<Informer<api.Deployment>, 'get'>; namespace: string; name: string };
}

/** The release version an operator reports, read afresh on each call. */
export function releaseVersion(source: ReleaseVersionSource): () => string | undefined {
  return () => {
    const d = source.deployment;
    const fromDeployment = d ? releaseVersionOf(d.informer.get(d.name, d.namespace)) : undefined;
    if (fromDeployment) return fromDeployment;
    return typeof source.version === 'function' ? source.version() : source.version;
  };
}

/** How many different failures of one controller a Degraded message names. */
const MESSAGES_SHOWN = 3;

/** A controller's failure as the operator reports it. */
export interface Failure {
  reason: string;
  message: string;
}

export interface DegradedOnErrorOptions {
  /** Consecutive failures of a key before the controller is failing (default 1). */
  after?: number;
  /** Errors that make it failing at once (a TerminalError always does). */
  immediate?: (error: Error) => boolean;
  /** The Degraded reason (default SyncFailed). */
  reason?: string | ((error: Error) => string);
  /** The Degraded message (default the error's message). */
  message?: (error: Error) => string;
}

export interface ClusterOperatorStatusOptions {
  client: KubeClient;
  /** The ClusterOperator's name, e.g. machine-config. */
  name: string;
  relatedObjects: RelatedObject[];
  /** A cache of the ClusterOperator (a name-selected informer), to skip reads. */
  informer?: Pick<Informer<api.ClusterOperator>, 'get'>;
  clock?: Clock;
  /** Called on each failure of a failing controller and when one stops failing: write the status
   *  again — or, when the failing controller is the one that writes it, write
   *  the failure directly (its syncs are what fails). */
  onFailureChange?: (failure: Failure | undefined, controller: string) => void;
}

/** One operator's ClusterOperator: the conditions, versions and related objects it reports. */
export class ClusterOperatorStatus {
  readonly name: string;
  private readonly clock: Clock;
  /** controller → key → its failure, for keys failing now. */
  private readonly failing = new Map<string, Map<string, Failure>>();
  private onChange?: ClusterOperatorStatusOptions['onFailureChange'];

  constructor(private readonly options: ClusterOperatorStatusOptions) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.onChange = options.onFailureChange;
  }

  /** Sets what is called when the reported failure changes (see the options). */
  onFailureChange(fn: NonNullable<ClusterOperatorStatusOptions['onFailureChange']>): void {
    this.onChange = fn;
  }

  /** Now on the operator's clock, for the conditions' transition times. */
  now(): Date {
    return new Date(this.clock.now());
  }

  /** The ClusterOperator as the cache has it. */
  current(): api.ClusterOperator | undefined {
    return this.options.informer?.get(this.name);
  }

  /** The conditions with each update set (lastTransitionTime kept unless the status changes);
   *  from the current ClusterOperator's conditions unless a base is given. */
  conditions(updates: Condition[], base: Condition[] | undefined = this.current()?.status?.conditions): Condition[] {
    const now = this.now();
    let conditions = [...(base ?? [])];
    for (const update of updates) conditions = setCondition(conditions, update, now);
    return conditions;
  }

  /** The versions to report: the release once `done`, until then those already reported (or none). */
  versions(done: boolean, version: string | undefined, current: api.ClusterOperator | undefined = this.current()): OperandVersion[] | undefined {
    if (done && version) return [{ name: 'operator', version }];
    const reported: OperandVersion[] | undefined = current?.status?.versions;
    return reported?.length ? reported : undefined;
  }

  /** The failure of every failing controller but `excluding`, as one (library-go's union). */
  failure(excluding?: string): Failure | undefined {
    const failures: Array<[string, Failure]> = [];
    for (const [controller, keys] of [...this.failing].sort(([a], [b]) => a.localeCompare(b))) {
      if (controller === excluding || keys.size === 0) continue;
      const first = [...keys.values()][0];
      const messages = [...new Set([...keys.values()].map((f) => f.message))];
      const shown = messages.slice(0, MESSAGES_SHOWN).join('; ') + (messages.length > MESSAGES_SHOWN ? `; and ${messages.length - MESSAGES_SHOWN} more` : '');
      failures.push([controller, { reason: first.reason, message: shown }]);
    }
    if (failures.length === 0) return undefined;
    if (failures.length === 1) return failures[0][1];
    return {
      reason: failures.map(([c, f]) => `${c}_${f.reason}`).join('::'),
      message: failures.map(([c, f]) => `${c}: ${f.message}`).join('\n'),
    };
  }

  /** A controller's sync outcomes as degraded-on-error (pass to Controller.reportTo). */
  degradedOnError(controller: string, o: DegradedOnErrorOptions = {}): SyncReporter {
    const keys = new Map<string, Failure>();
    this.failing.set(controller, keys);
    return {
      report: (key, error, retries, terminal) => {
        const before = JSON.stringify(this.failure());
        if (!error) keys.delete(key);
        else if (terminal || o.immediate?.(error) || retries >= (o.after ?? 1)) {
          const reason = typeof o.reason === 'function' ? o.reason(error) : (o.reason ?? 'SyncFailed');
          keys.set(key, { reason, message: o.message ? o.message(error) : error.message });
        } else return;
        // While failing, every failure is told (the ClusterOperator may have been deleted meanwhile:
        // writing it again brings it back); a recovery once.
        if (error || JSON.stringify(this.failure()) !== before) this.onChange?.(this.failure(), controller);
      },
    };
  }

  /** The ClusterOperator as the server has it, created (empty) when missing. */
  async live(): Promise<api.ClusterOperator> {
    const { client, name } = this.options;
    const found = this.current() ?? (await client.read(resources.clusterOperators, name));
    if (found) return found;
    return client.create(resources.clusterOperators, { apiVersion: 'config.openshift.io/v1', kind: 'ClusterOperator', metadata: { name }, spec: {} }).catch((e) => {
      if (!isConflict(e)) throw e;
      return client.get(resources.clusterOperators, name);
    });
  }

  /**
   * Writes the status: these conditions (with Degraded=True while a controller other than
   * `from` — the writer, whose own sync got this far — is failing), the versions when given (else
   * those reported stay) and the related objects; nothing when it would not change.
   */
  async write(status: { conditions: Condition[]; versions?: OperandVersion[] }, o: { from?: string } = {}): Promise<'written' | 'unchanged'> {
    let conditions = status.conditions;
    const failure = this.failure(o.from);
    if (failure) conditions = this.conditions([{ type: 'Degraded', status: 'True', ...failure }], conditions);
    const live = await this.live();
    const wanted = { conditions, ...(status.versions ? { versions: status.versions } : {}), relatedObjects: this.options.relatedObjects };
    const same = (field: 'versions' | 'relatedObjects') => !(field in wanted) || JSON.stringify(live.status?.[field]) === JSON.stringify((wanted as Partial<api.ClusterOperatorStatus>)[field]);
    if (sameConditions(live.status?.conditions, conditions) && same('versions') && same('relatedObjects')) return 'unchanged';
    await this.options.client.mergePatch(resources.clusterOperators, this.name, undefined, { metadata: { resourceVersion: live.metadata.resourceVersion }, status: wanted }, 'status');
    return 'written';
  }
}

