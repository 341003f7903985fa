// Cluster Settings: the version and its history; the channel (changed here); the update graph;
// starting an update to an offered version (a conditional one only with its risks acknowledged);
// and the update's progress, live, assessed exactly as `bosun adm upgrade status` assesses it
// (src/views/upgrade-status: the same function over the same objects, watched here).
import { useState } from 'preact/hooks';
import type * as api from '../../../api/index.js';
import { assessUpdate, upgradeStatus, type ClusterState, type PoolData, type UpdateAssessment } from '../../../views/upgrade-status/status.js';
import { mergePatch } from '../api.js';
import { useList, useObject } from '../store.js';
import { kinds, listPath, objectPath } from '../resources.js';
import { ApiProblem, Outcome, Page, Table, StatusBadge, conditionOf, show } from '../ui.js';
import { UpdateGraph, updateEdges, type GraphEdge } from '../graph.js';

const CV_PATH = objectPath(kinds.clusterVersions, 'version');

function ChannelForm({ cv }: { cv: api.ClusterVersion }) {
  const [channel, setChannel] = useState(cv.spec?.channel ?? '');
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const known = [...new Set([...(cv.status?.desired?.channels ?? []), ...(cv.spec?.channel ? [cv.spec.channel] : [])])].sort();
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await mergePatch(CV_PATH, { spec: { channel: channel.trim() || null } });
      setOutcome({ ok: true, message: channel.trim() ? `channel set to ${channel.trim()}` : 'channel cleared' });
    } catch (err) {
      setOutcome({ ok: false, message: (err as Error).message });
    }
  };
  return (
    <form class="inline" onSubmit={submit}>
      <label for="channel">Channel</label>
      {known.length > 0 ? (
        // The channels the release offers (status.desired.channels), as OpenShift's channel modal offers them.
        <select id="channel" value={channel} onChange={(e) => setChannel((e.target as HTMLSelectElement).value)}>
          {known.map((c) => <option key={c} value={c}>{c}</option>)}
        </select>
      ) : (
        <input id="channel" value={channel} onInput={(e) => setChannel((e.target as HTMLInputElement).value)} />
      )}
      <button type="submit">Save channel</button>
      <Outcome outcome={outcome} />
    </form>
  );
}

function StartUpdate({ cv, edges }: { cv: api.ClusterVersion; edges: GraphEdge[] }) {
  const offered = edges.filter((e) => e.kind !== 'blocked');
  const [chosen, setChosen] = useState<string>('');
  const [accepted, setAccepted] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const edge = offered.find((e) => e.version === chosen);
  const risky = Boolean(edge && edge.kind === 'conditional');
  if (!offered.length) return <p>No update can be started: {edges.length ? 'every offered update is blocked.' : `no updates are offered on ${cv.spec?.channel ? `channel ${cv.spec.channel}` : 'an empty channel'}.`}</p>;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!edge) return setOutcome({ ok: false, message: 'choose a version' });
    if (risky && !accepted) return setOutcome({ ok: false, message: 'acknowledge the known risks of this update first' });
    try {
      await mergePatch(CV_PATH, { spec: { desiredUpdate: { version: edge.version, image: edge.image, force: false } } });
      setOutcome({ ok: true, message: `update to ${edge.version} requested` });
    } catch (err) {
      setOutcome({ ok: false, message: (err as Error).message });
    }
  };
  return (
    <form onSubmit={submit} class="update-form">
      <fieldset>
        <legend>Update to</legend>
        {offered.map((e) => (
          <div key={e.version}>
            <input type="radio" id={`target-${e.version}`} name="target" value={e.version} checked={chosen === e.version} onChange={() => { setChosen(e.version); setAccepted(false); }} />
            <label for={`target-${e.version}`}>{e.version} {e.kind === 'recommended' ? '(recommended)' : `(known issues: ${e.risks.map((r) => r.name).join(', ') || 'conditional'})`}</label>
          </div>
        ))}
      </fieldset>
      {risky && edge && (
        <div class="notice notice-warning">
          <p>{edge.version} is not a recommended update: {edge.risks.map((r) => `${r.name}${r.message ? ` — ${r.message}` : ''}`).join('; ')}</p>
          <input type="checkbox" id="accept-risks" checked={accepted} onChange={(e) => setAccepted((e.target as HTMLInputElement).checked)} />
          <label for="accept-risks">I have read the risks and want to update anyway</label>
        </div>
      )}
      <button type="submit" disabled={!edge || (risky && !accepted)}>Start update</button>
      <Outcome outcome={outcome} />
    </form>
  );
}

function PoolProgress({ pool, paused }: { pool: PoolData; paused: boolean }) {
  const o = pool.overview;
  const busy = pool.nodes.filter((n) => ['Draining', 'Updating', 'Rebooting'].includes(n.phase));
  return (
    <li>
      <strong>{pool.name}</strong>: {pool.assessment}, {o.total - o.outdated}/{o.total} nodes updated ({Math.round(pool.completion)}%)
      {busy.length > 0 && <> — now {busy.map((n) => `${n.phase.toLowerCase()} ${n.name}`).join(', ')}</>}
      {paused && <> <span class="badge badge-bad">paused: its nodes will not be updated until it is unpaused</span></>}
    </li>
  );
}

function Progress({ assessment, state, cv }: { assessment: UpdateAssessment; state: ClusterState; cv: api.ClusterVersion }) {
  const progressing = conditionOf(cv, 'Progressing');
  const text = upgradeStatus(state, 'none', Date.now());
  return (
    <section aria-labelledby="progress-heading" class="card" data-testid="update-progress">
      <h2 id="progress-heading">Update progress</h2>
      <p><StatusBadge condition={progressing} good="False" label={progressing?.status === 'True' ? 'Progressing' : 'Not progressing'} /> {show(progressing?.message)}</p>
      {!assessment.updating ? (
        <p data-testid="assessment">The cluster is not updating.</p>
      ) : (
        <>
          <dl class="facts">
            <dt>Assessment</dt><dd data-testid="assessment">{assessment.controlPlane.assessment}</dd>
            <dt>Target</dt><dd>{assessment.controlPlane.targetText}</dd>
            <dt>Cluster operators</dt>
            <dd data-testid="operators-updated">{assessment.controlPlane.operators.updated}/{assessment.controlPlane.operators.total} updated{assessment.controlPlane.operators.updating.length ? `; updating: ${assessment.controlPlane.operators.updating.map((u) => u.name).join(', ')}` : ''}</dd>
          </dl>
          <ul class="pools">
            {[...(assessment.master ? [assessment.master] : []), ...assessment.workers].map((p) => (
              <PoolProgress key={p.name} pool={p} paused={Boolean(state.pools.find((x) => x.metadata.name === p.name)?.spec?.paused)} />
            ))}
          </ul>
          <ul class="insights">
            {assessment.health.insights.map((i, n) => <li key={n}><span class={`badge badge-${i.level === 'Info' ? 'ok' : i.level === 'Warning' ? 'unknown' : 'bad'}`}>{i.level}</span> {i.summary}</li>)}
          </ul>
        </>
      )}
      <details>
        <summary>As <code>bosun adm upgrade status</code> prints it</summary>
        <pre data-testid="upgrade-status-text">{text}</pre>
      </details>
    </section>
  );
}

export function ClusterSettings() {
  const cv = useObject<api.ClusterVersion>(listPath(kinds.clusterVersions), 'version');
  const operators = useList<api.ClusterOperator>(listPath(kinds.clusterOperators));
  const pools = useList<api.MachineConfigPool>(listPath(kinds.machineConfigPools));
  const nodes = useList<api.Node>(listPath(kinds.nodes));
  const configs = useList<api.MachineConfig>(listPath(kinds.machineConfigs));
  const mco = useObject<api.Deployment>(listPath(kinds.deployments, 'openshift-machine-config-operator'), 'machine-config-operator');
  if (cv.error) return <Page title="Cluster Settings"><ApiProblem error={cv.error} kind={kinds.clusterVersions} what="the cluster version" /></Page>;
  if (!cv.loaded) return <Page title="Cluster Settings"><p role="status">Loading the cluster version…</p></Page>;
  if (!cv.object) return <Page title="Cluster Settings"><p>This cluster has no ClusterVersion "version".</p></Page>;
  const version = cv.object;
  const edges = updateEdges(version);
  const missing = [[operators, kinds.clusterOperators], [pools, kinds.machineConfigPools], [nodes, kinds.nodes], [configs, kinds.machineConfigs]] as const;
  const refused = missing.filter(([s]) => s.error);
  let assessment: UpdateAssessment | undefined;
  let assessError: string | undefined;
  const state: ClusterState = {
    cv: version, operators: operators.items, pools: pools.items, nodes: nodes.items, machineConfigs: configs.items,
    mcoImage: (mco.object?.spec?.template?.spec?.containers ?? []).find((c) => c.name === 'machine-config-operator')?.image ?? '',
  };
  if (!refused.length && operators.loaded && pools.loaded && nodes.loaded && configs.loaded) {
    try {
      assessment = assessUpdate(state, Date.now());
    } catch (e) {
      assessError = (e as Error).message;
    }
  }
  return (
    <Page title="Cluster Settings">
      <section class="card" aria-labelledby="version-heading">
        <h2 id="version-heading">Version</h2>
        <dl class="facts">
          <dt>Current version</dt><dd data-testid="current-version">{show(version.status?.desired?.version)}</dd>
          <dt>Release image</dt><dd><code>{show(version.status?.desired?.image)}</code></dd>
          <dt>Update service</dt><dd>{show(version.spec?.upstream)}</dd>
          <dt>Upgradeable</dt><dd>{conditionOf(version, 'Upgradeable') ? <><StatusBadge condition={conditionOf(version, 'Upgradeable')} /> {conditionOf(version, 'Upgradeable')?.message ?? ''}</> : 'yes (nothing blocks minor updates)'}</dd>
        </dl>
        <ChannelForm cv={version} />
      </section>
      <section class="card" aria-labelledby="graph-heading">
        <h2 id="graph-heading">Update graph</h2>
        <UpdateGraph cv={version} />
        <StartUpdate cv={version} edges={edges} />
      </section>
      {refused.length > 0 ? (
        <section class="card"><h2>Update progress</h2>{refused.map(([s, k]) => <ApiProblem key={k.plural} error={s.error!} kind={k} />)}</section>
      ) : assessError ? (
        <section class="card"><h2>Update progress</h2><p class="notice notice-error">{assessError}</p></section>
      ) : assessment ? (
        <Progress assessment={assessment} state={state} cv={version} />
      ) : (
        <p role="status">Loading the update's progress…</p>
      )}
      <section aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        <Table
          caption="Updates, newest first"
          rows={version.status?.history ?? []}
          rowKey={(h) => `${h.version}|${h.startedTime}`}
          columns={[
            { title: 'Version', cell: (h) => show(h.version) },
            { title: 'State', cell: (h) => show(h.state) },
            { title: 'Started', cell: (h) => show(h.startedTime) },
            { title: 'Completed', cell: (h) => show(h.completionTime) },
            { title: 'Verified', cell: (h) => (h.verified ? 'yes' : 'no') },
          ]}
          empty="No history yet."
        />
      </section>
    </Page>
  );
}
