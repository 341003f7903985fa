// The Control Plane section, assessed as oc assesses it from the ClusterVersion and the platform
// ClusterOperators (those a release payload manages: annotated include./exclude.release.openshift.io/).
//
// - An operator is updated when its `operator` version is the desired version (machine-config also
//   needs its `operator-image` to be the image its Deployment runs); updating when not updated and
//   Progressing=True; waiting when not updated and Progressing=False.
// - Completion is updated / all, printed with %.0f. The estimate extrapolates the time to the last
//   observed progress along oc's curve of typical updates (or the last completed update's duration,
//   or an hour), 20% pessimistic; an update past its estimate is "Progressing - Slow", and more
//   than ten minutes past it "Stalled" (`Est. Time Remaining: N/A; estimate duration was …`).
// - Operator Health: Unavailable (Available not True), "Available but degraded" (Degraded=True).
// - Insights: the ClusterVersion failing to proceed (Failing not False, or missing); an operator
//   unavailable or degraded for 5 minutes (Warning, API Availability; Error after 20 / 40
//   minutes); an update started over an incomplete one.
import type * as api from '../../api/index.js';
import { fixed0, ellipsis, parseTime, roundDuration, shortDuration, tabwrite, truncateDuration, HOUR, MINUTE, SECOND, ZERO_TIME } from './format.js';
import { kinds, type Insight } from './health.js';

export type Condition = { type: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string };
/** The condition of a type on a ClusterVersion or a ClusterOperator. */
export const findCondition = (o: { status?: { conditions?: readonly Condition[] } } | undefined, type: string): Condition | undefined => (o?.status?.conditions ?? []).find((c) => c.type === type);

const RUNBOOKS = 'https://github.com/openshift/runbooks/blob/master/alerts/cluster-monitoring-operator';
const HISTORY_DOC = 'https://docs.openshift.com/container-platform/latest/updating/troubleshooting_updates/gathering-data-cluster-update.html#gathering-clusterversion-history-cli_troubleshooting_updates';

export interface UpdatingOperator { name: string; condition: Condition }

export interface ControlPlane {
  assessment: 'Progressing' | 'Progressing - Slow' | 'Completed' | 'Stalled';
  completion: number;
  completionAt: number;
  duration: number;
  estDuration: number;
  estTimeToComplete: number;
  operators: { total: number; unavailable: number; degraded: number; updated: number; waiting: number; updating: UpdatingOperator[] };
  target: string;
  targetText: string;
  multiArch: boolean;
}

function operatorInsights(name: string, available: Condition | undefined, degraded: Condition | undefined, now: number): Insight[] {
  const out: Insight[] = [];
  const resources = [{ kind: kinds.clusterOperator, name }];
  const problem = (c: Condition, what: string, warnAfter: number, errorAfter: number, runbook: string) => {
    const since = parseTime(c.lastTransitionTime);
    if (!(now > since + warnAfter)) return;
    out.push({
      startedAt: since, level: now > since + errorAfter ? 'Error' : 'Warning', impact: 'API Availability', resources,
      summary: `Cluster Operator ${name} is ${what} (${c.reason ?? ''})`, description: c.message || '<no message>', reference: `${RUNBOOKS}/${runbook}`,
    });
  };
  if (available?.status === 'False') problem(available, 'unavailable', 5 * MINUTE, 20 * MINUTE, 'ClusterOperatorDown.md');
  if (degraded?.status === 'True') problem(degraded, 'degraded', 5 * MINUTE, 40 * MINUTE, 'ClusterOperatorDegraded.md');
  return out;
}

function clusterVersionInsight(cv: api.ClusterVersion, now: number): Insight | undefined {
  const name: string = cv.metadata.name ?? 'version';
  const base = { level: 'Warning' as const, impact: 'Update Stalled' as const, resources: [{ kind: kinds.clusterVersion, name }], reference: `${RUNBOOKS}/ClusterOperatorDegraded.md` };
  const failing = findCondition(cv, 'Failing');
  if (!failing) {
    return { ...base, startedAt: now, summary: `Cluster Version ${name} has no Failing condition`, description: "Current status of Cluster Version reconciliation is unclear.  See 'oc -n openshift-cluster-version logs -l k8s-app=cluster-version-operator --tail -1' to debug." };
  }
  if (failing.status === 'False') return undefined;
  const verb = failing.status === 'Unknown' ? 'may be' : 'is';
  return { ...base, startedAt: parseTime(failing.lastTransitionTime), summary: `Cluster Version ${name} ${verb} failing to proceed with the update (${failing.reason ?? ''})`, description: failing.message ?? '' };
}

const isPlatformOperator = (o: api.ClusterOperator) => Object.keys(o.metadata?.annotations ?? {}).some((a) => a.startsWith('exclude.release.openshift.io/') || a.startsWith('include.release.openshift.io/'));

/** The same version from a different image: a migration to a multi-architecture payload. */
export const isMultiArchMigration = (history: readonly api.UpdateHistory[]) => history.length > 1 && history[0].version === history[1].version && history[0].image !== history[1].image;

/** The duration of the last completed update between the current one and the install, else an hour. */
function baselineDuration(history: readonly api.UpdateHistory[]): number {
  if (history.length < 3) return HOUR;
  const done = history.slice(1, -1).find((h) => h.state === 'Completed');
  return done ? parseTime(done.completionTime) - parseTime(done.startedTime) : HOUR;
}

/** The fraction of an update's time by which a typical update has updated `x` of its operators. */
function timewiseComplete(x: number): number {
  if (x < 0.25) return -0.03078788 + 2.62886 * x - 3.823954 * x ** 2;
  if (x < 0.9) return 0.1851215 + 1.64994 * x - 4.676898 * x ** 2 + 5.451824 * x ** 3 - 2.125286 * x ** 4;
  return 25053.32 - 107394.3 * x + 172527.2 * x ** 2 - 123107 * x ** 3 + 32921.81 * x ** 4;
}

function estimateCompletion(baseline: number, toLastObservedProgress: number, updatingFor: number, completion: number): number {
  if (completion >= 1) return 0;
  const timewise = timewiseComplete(completion);
  const totalSeconds = completion > 0 && timewise > 0 && toLastObservedProgress > 5 * MINUTE ? toLastObservedProgress / SECOND / timewise : baseline / SECOND;
  const remaining = totalSeconds - updatingFor / SECOND;
  const estimate = Math.trunc(remaining * (remaining < 0 ? 1 / 1.2 : 1.2)) * SECOND;
  return estimate > 10 * MINUTE ? roundDuration(estimate, MINUTE) : estimate;
}

function versions(history: readonly api.UpdateHistory[], cvName: string, controlPlaneCompleted: boolean): { text: string; insight?: Insight } {
  const target: string = history[0]?.version ?? 'unknown';
  if (history.length === 1) return { text: `${target} (a new install)` };
  const previous: string = history[1]?.version ?? 'unknown';
  const previousPartial = history[1]?.state === 'Partial';
  const text = previousPartial ? `${target} (from incomplete ${previous})` : isMultiArchMigration(history) ? `${target} to Multi-Architecture` : `${target} (from ${previous})`;
  if (controlPlaneCompleted || !previousPartial) return { text };
  const lastComplete: string = history.slice(2).find((h) => h.state === 'Completed')?.version ?? 'unknown';
  return {
    text,
    insight: {
      startedAt: parseTime(history[0].startedTime), level: 'Warning', impact: 'None', resources: [{ kind: kinds.clusterVersion, name: cvName }], reference: HISTORY_DOC,
      summary: `Previous update to ${previous} never completed, last complete update was ${lastComplete}`,
      description: `Current update to ${target} was initiated while the previous update to version ${previous} was still in progress`,
    },
  };
}

/** `mcoImage`: the image of the machine-config-operator container of its Deployment ('' if none). */
export function assessControlPlane(cv: api.ClusterVersion, operators: readonly api.ClusterOperator[], mcoImage: string, now: number): { data: ControlPlane; insights: Insight[] } {
  const target: string = cv.status?.desired?.version ?? '';
  const history = cv.status?.history ?? [];
  const insights: Insight[] = [];
  const cvInsight = clusterVersionInsight(cv, now);
  if (cvInsight) insights.push(cvInsight);

  const ops: ControlPlane['operators'] = { total: 0, unavailable: 0, degraded: 0, updated: 0, waiting: 0, updating: [] };
  let lastObservedProgress = ZERO_TIME;
  let mcoStartedUpdating = ZERO_TIME;
  for (const o of operators.filter(isPlatformOperator)) {
    const reported = o.status?.versions ?? [];
    const imageBehind = o.metadata.name === 'machine-config' && reported.some((v) => v.name === 'operator-image' && v.version !== mcoImage);
    const updated = !imageBehind && reported.some((v) => v.name === 'operator' && v.version === target);
    if (updated) ops.updated++;
    ops.total++;
    const available = findCondition(o, 'Available');
    const degraded = findCondition(o, 'Degraded');
    const progressing = findCondition(o, 'Progressing');
    if (progressing) {
      const changed = parseTime(progressing.lastTransitionTime);
      if (changed > lastObservedProgress) lastObservedProgress = changed;
      if (!updated && progressing.status === 'True') {
        ops.updating.push({ name: o.metadata.name, condition: progressing });
        if (o.metadata.name === 'machine-config') mcoStartedUpdating = changed;
      }
      if (!updated && progressing.status === 'False') ops.waiting++;
    }
    if (available?.status !== 'True') ops.unavailable++;
    else if (degraded?.status === 'True') ops.degraded++;
    insights.push(...operatorInsights(o.metadata.name, available, degraded, now));
  }

  const completed = ops.updated === ops.total;
  let assessment: ControlPlane['assessment'] = completed ? 'Completed' : 'Progressing';
  // The machine-config operator, last to finish, goes Progressing while its pools roll: its start
  // is the last real progress (daemon sets flip their Progressing as nodes reboot).
  if (mcoStartedUpdating !== ZERO_TIME && ops.total - ops.updated === 1) lastObservedProgress = mcoStartedUpdating;

  let updatingFor = 0;
  let toLastObservedProgress = 0;
  let completionAt = 0;
  let duration = 0;
  if (history.length) {
    const started = parseTime(history[0].startedTime);
    if (!(lastObservedProgress > started)) lastObservedProgress = now;
    toLastObservedProgress = lastObservedProgress - started;
    completionAt = history[0].state === 'Completed' ? parseTime(history[0].completionTime) : now;
    updatingFor = completionAt - started;
    duration = roundDuration(updatingFor, updatingFor > 10 * MINUTE ? MINUTE : SECOND);
  }

  const v = versions(history, cv.metadata?.name ?? 'version', completed);
  if (v.insight) insights.push(v.insight);

  const fraction = ops.updated / ops.total;
  let estTimeToComplete = 0;
  let estDuration = 0;
  if (fraction <= 1 && assessment !== 'Completed') {
    estTimeToComplete = estimateCompletion(baselineDuration(history), toLastObservedProgress, updatingFor, fraction);
    estDuration = truncateDuration(updatingFor + estTimeToComplete, MINUTE);
    if (estTimeToComplete < -10 * MINUTE) assessment = 'Stalled';
    else if (estTimeToComplete < 0) assessment = 'Progressing - Slow';
  }
  return {
    data: {
      assessment, completion: fraction * 100, completionAt, duration, estDuration, estTimeToComplete, operators: ops,
      target: history[0]?.version ?? 'unknown', targetText: v.text, multiArch: isMultiArchMigration(history),
    },
    insights,
  };
}

function vagueUnder(actual: number, estimated: number, multiArch: boolean): string {
  if (multiArch) return 'N/A for Multi-Architecture Migration';
  if (actual < -10 * MINUTE) return `N/A; estimate duration was ${shortDuration(estimated)}`;
  if (actual < 10 * MINUTE) return `<${shortDuration(10 * MINUTE)}`;
  return shortDuration(actual);
}

const rfc3339 = (t: number) => new Date(truncateDuration(t, SECOND)).toISOString().replace('.000Z', 'Z');

/** The section; `detailed` (--details=operators) adds the Updating Cluster Operators table. */
export function writeControlPlane(d: ControlPlane, detailed: boolean, now: number): string {
  const ops = d.operators;
  if (ops.updated === ops.total) return `= Control Plane =\nUpdate to ${d.target} successfully completed at ${rfc3339(d.completionAt)} (duration: ${shortDuration(d.duration)})\n`;
  const estimate = d.estTimeToComplete ? ` (Est. Time Remaining: ${vagueUnder(d.estTimeToComplete, d.estDuration, d.multiArch)})` : '';
  let out = [
    '= Control Plane =',
    `Assessment:      ${d.assessment}`,
    `Target Version:  ${d.targetText}`,
    ...(ops.updating.length ? [`Updating:        ${ops.updating.map((u) => u.name).join(', ')}`] : []),
    `Completion:      ${fixed0(d.completion)}% (${ops.updated} operators updated, ${ops.updating.length} updating, ${ops.waiting} waiting)`,
    `Duration:        ${shortDuration(d.duration)}${estimate}`,
    `Operator Health: ${[`${ops.total - ops.unavailable - ops.degraded} Healthy`, ...(ops.unavailable ? [`${ops.unavailable} Unavailable`] : []), ...(ops.degraded ? [`${ops.degraded} Available but degraded`] : [])].join(', ')}`,
  ].join('\n') + '\n';
  if (detailed && ops.updating.length) {
    const rows = ops.updating.map(({ name, condition: c }) => {
      const [first, ...more] = (c.message ?? '').split('\n');
      const lead = `${name}\t${shortDuration(now - parseTime(c.lastTransitionTime))}\t${ellipsis(c.reason || '-', 20)}\t${first}\n`;
      return lead + more.map((line) => `\t\t\t${line}\n`).join('');
    });
    out += `\nUpdating Cluster Operators${tabwrite(`\nNAME\tSINCE\tREASON\tMESSAGE\n${rows.join('')}`)}`;
  }
  return out;
}
