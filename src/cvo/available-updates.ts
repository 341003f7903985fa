// The CVO's available updates: asks the update service (spec.upstream + spec.channel) what the
// cluster may move to, evaluates the risks of conditional updates, and gives the status change
// (availableUpdates, conditionalUpdates, desired.channels, RetrievedUpdates). Polls every
// interval on the CVO's clock, sooner after failures (5 s, 10 s, 20 s, … up to the interval) so
// a flapping service is neither hammered nor left unasked for long; keeps the last answer on
// failure. Between polls the risks are evaluated again, without asking the update service, every
// second while some update is Recommended=Unknown (a rule waiting its turn in the throttled
// cache, or a failing Prometheus) and at once when spec.desiredUpdate.acceptRisks changes; a
// conditional update that is recommended is offered in availableUpdates too, as OpenShift's CVO
// does. A condition keeps its lastTransitionTime while its status stays.
import semver from 'semver';
import type { Clock } from '../kube/clock.js';
import { rfc3339 } from '../common/time.js';
import { fetchUpdateGraph, RetrievalError } from './updates/upstream.js';
import { walkGraph, GraphWalkError, type Release, type UpdateChoices } from './updates/graph-walk.js';
import { evaluateConditionalUpdates, type PromQLRuleMatcher } from './updates/risks.js';
import { setCondition } from './status.js';

import type * as api from '../api/index.js';
import type { VersionStatus } from './status.js';
import type { RiskCondition } from './metrics.js';

export type StatusChange = (status: VersionStatus) => VersionStatus;

export interface UpdatePollerOptions {
  clock: Clock;
  /** How often the update service is asked (default 5 minutes). */
  intervalMs?: number;
  /** Evaluates PromQL rules (the throttled cache in front of the PromQL service); without it they are Unknown. */
  promql?: PromQLRuleMatcher;
}

/** How often risks are evaluated again while some update is Recommended=Unknown (OpenShift: 1 s). */
const UNKNOWN_RETRY_MS = 1000;

/** The risk names spec.desiredUpdate.acceptRisks accepts. */
export function acceptedRisks(cv: api.ClusterVersion): Set<string> {
  return new Set((cv.spec?.desiredUpdate?.acceptRisks ?? []).map((r) => r.name).filter(Boolean));
}

export class UpdatePoller {
  private lastPoll = 0;
  private failures = 0;
  private lastKey = '';
  private lastConfig?: string;
  private lastSyncOrConfigChange?: number;
  /** The last graph walked for the current key, whose risks are evaluated again between polls. */
  private choices?: UpdateChoices;
  private lastEvaluation = 0;
  private lastAccepted = '';
  private unknown = false;
  private risks: RiskCondition[] = [];

  constructor(private readonly options: UpdatePollerOptions) {}

  /**
   * When updates were last retrieved successfully, or the upstream or channel last changed (the
   * first attempt counts as a change), in ms on the clock: OpenShift's LastSyncOrConfigChange,
   * exported as cluster_version_operator_update_retrieval_timestamp_seconds.
   */
  lastRetrieval(): number | undefined {
    return this.lastSyncOrConfigChange;
  }

  /** Whether each risk of the last evaluation applies (cluster_version_risk_conditions). */
  riskConditions(): RiskCondition[] {
    return this.risks;
  }

  /** The status change to write when a poll is due for `cv`, else undefined. */
  async poll(cv: api.ClusterVersion): Promise<StatusChange | undefined> {
    const { clock } = this.options;
    const upstream: string | undefined = cv.spec?.upstream;
    const channel: string = cv.spec?.channel ?? '';
    const current = (cv.status?.history ?? []).find((h) => h.state === 'Completed');
    const key = `${upstream}|${channel}|${current?.image}`;
    const interval = this.options.intervalMs ?? 300_000;
    const due = this.failures === 0 ? interval : Math.min(interval, Math.min(5_000, interval) * 2 ** (this.failures - 1));
    const accepted = acceptedRisks(cv);
    const acceptedKey = [...accepted].sort().join('\n');
    if (key === this.lastKey && clock.now() - this.lastPoll < due) {
      // Not time to ask the update service: evaluate the risks again if they are unknown or the accepted risks changed.
      const retry = this.unknown && clock.now() - this.lastEvaluation >= UNKNOWN_RETRY_MS;
      if (!this.choices || !(retry || acceptedKey !== this.lastAccepted)) return undefined;
      return this.evaluated(this.choices, accepted, acceptedKey, (st) => st);
    }
    this.lastPoll = clock.now();
    // Another upstream, channel or current release: the last answer is not this one's.
    if (key !== this.lastKey) this.choices = undefined;
    this.lastKey = key;
    const config = `${upstream}|${channel}`;
    if (config !== this.lastConfig) this.lastSyncOrConfigChange = this.lastPoll;
    this.lastConfig = config;
    const attempted = this.lastPoll;
    const fail = (reason: string, message: string): StatusChange => {
      this.failures++;
      return (st) => ({ ...st, conditions: setCondition(st.conditions ?? [], 'RetrievedUpdates', 'False', reason, message, clock.now()) });
    };
    if (!upstream) return fail('NoUpstream', 'No upstream server has been set to retrieve updates.');
    if (!current?.version) return fail('NoCurrentVersion', 'The cluster version does not have a semantic version assigned and cannot calculate valid upgrades.');
    const currentVersion = current.version;
    try {
      const graph = await fetchUpdateGraph({ upstream, channel, version: current.version, id: cv.spec?.clusterID });
      const choices = walkGraph(graph, current.version, current.image);
      this.failures = 0;
      this.lastSyncOrConfigChange = attempted;
      this.choices = choices;
      return this.evaluated(choices, accepted, acceptedKey, (st) => ({
        ...st,
        desired: { ...(st.desired ?? { version: currentVersion, image: current.image }), channels: choices.channels.length ? choices.channels : undefined },
        conditions: setCondition(st.conditions ?? [], 'RetrievedUpdates', 'True', 'AsExpected', '', clock.now()),
      }));
    } catch (e) {
      if (e instanceof RetrievalError || e instanceof GraphWalkError) return fail(e.reason, e.message);
      return fail('RemoteFailed', (e as Error).message);
    }
  }

  /** Evaluates the risks of `choices` and gives the status change: available and conditional updates, then `more`. */
  private async evaluated(choices: UpdateChoices, accepted: Set<string>, acceptedKey: string, more: StatusChange): Promise<StatusChange> {
    const { clock } = this.options;
    const { conditions, risks } = await evaluateConditionalUpdates(choices.conditionalUpdates, this.options.promql, accepted);
    this.risks = [...risks].map(([risk, applies]) => ({ risk, status: applies instanceof Error ? 'Unknown' : applies ? 'True' : 'False', reason: applies instanceof Error ? 'EvaluationFailed' : applies ? 'Match' : 'NotMatch' }));
    this.lastEvaluation = clock.now();
    this.lastAccepted = acceptedKey;
    this.unknown = conditions.some((c) => c.status === 'Unknown');
    const now = rfc3339(new Date(clock.now()));
    // A conditional update that is recommended after all is offered as an available update too.
    const available: Release[] = [...choices.availableUpdates];
    choices.conditionalUpdates.forEach((update, i) => {
      if (conditions[i].status === 'True' && !available.some((r) => r.image === update.release.image)) available.push(update.release);
    });
    available.sort((a, b) => semver.rcompare(a.version, b.version));
    return (st) => {
      const previous = new Map((st.conditionalUpdates ?? []).map((u) => [u.release?.image, (u.conditions ?? []).find((c) => c.type === 'Recommended')]));
      const conditionalUpdates: api.ConditionalUpdate[] = choices.conditionalUpdates.map((update, i) => {
        const was = previous.get(update.release.image);
        const since = was && was.status === conditions[i].status ? was.lastTransitionTime : now;
        // The graph's rule types are the CRD's (Always, PromQL); the update service serves no others.
        return { release: update.release, risks: update.risks as api.ConditionalUpdate['risks'], conditions: [{ ...conditions[i], lastTransitionTime: since }] };
      });
      return more({ ...st, availableUpdates: available.length ? available : null, conditionalUpdates: conditionalUpdates.length ? conditionalUpdates : undefined });
    };
  }
}
