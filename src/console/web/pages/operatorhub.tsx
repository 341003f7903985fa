// OperatorHub and Installed Operators (OLM). OperatorHub: the catalogs (CatalogSources, live) and
// their packages — the package server's PackageManifests, which have no watch, so they are read
// again whenever a catalog changes — and an install form: channel, install mode (all namespaces,
// in openshift-operators, or one namespace), the namespace, and approval; installing makes the
// namespace if it is missing, an OperatorGroup if it has none, and the Subscription (install.ts).
// Installed Operators, live: InstallPlans (Approve on one that waits for approval), Subscriptions,
// and ClusterServiceVersions with their phase. In all namespaces or the one chosen in the header.
import { useEffect, useRef, useState } from 'preact/hooks';
import type * as api from '../../../api/index.js';
import { ApiError, create, getJSON, mergePatch } from '../api.js';
import { useList } from '../store.js';
import { kinds, listPath, objectPath } from '../resources.js';
import { ApiProblem, ListBody, Page, Table, Outcome, Age, show, objectKey as key, namespaceCell as ns } from '../ui.js';
import { defaultInstallNamespace, namespaceProblem, offeredInstallModes, operatorGroupPlan, subscriptionFor, type Approval, type InstallMode } from '../install.js';

/** A phase as a badge: Succeeded/Complete good, Failed bad, anything else on its way. */
export function PhaseBadge({ phase }: { phase?: string }) {
  const tone = phase === 'Succeeded' || phase === 'Complete' ? 'ok' : phase === 'Failed' ? 'bad' : 'unknown';
  return <span class={`badge badge-${tone}`}>{phase || 'Unknown'}</span>;
}

const defaultChannelOf = (p: api.PackageManifest) => p.status.channels.find((c) => c.name === p.status.defaultChannel) ?? p.status.channels[0];
const displayName = (p: api.PackageManifest) => defaultChannelOf(p)?.currentCSVDesc?.displayName || p.status.packageName;
const packageKey = (p: api.PackageManifest) => `${p.status.catalogSourceNamespace}/${p.status.catalogSource}/${p.status.packageName}`;

/** The PackageManifests of `namespace` (all namespaces when ''), read again whenever `version` changes. */
function usePackages(namespace: string, version: string): { items: api.PackageManifest[]; loaded: boolean; error?: ApiError } {
  const [state, setState] = useState<{ items: api.PackageManifest[]; loaded: boolean; error?: ApiError }>({ items: [], loaded: false });
  useEffect(() => {
    let current = true;
    getJSON<{ items?: api.PackageManifest[] }>(listPath(kinds.packageManifests, namespace))
      .then((list) => current && setState({ items: [...(list.items ?? [])].sort((a, b) => packageKey(a).localeCompare(packageKey(b))), loaded: true }))
      .catch((error: unknown) => current && setState((s) => ({ ...s, loaded: true, error: error instanceof ApiError ? error : new ApiError(0, '', String(error)) })));
    return () => {
      current = false;
    };
  }, [namespace, version]);
  return state;
}

const MODE_LABELS: Record<InstallMode, string> = { AllNamespaces: 'All namespaces on the cluster', OwnNamespace: 'A specific namespace on the cluster' };

function InstallForm({ pkg, namespace, onClose }: { pkg: api.PackageManifest; namespace: string; onClose: () => void }) {
  const [channelName, setChannelName] = useState(defaultChannelOf(pkg)?.name ?? '');
  const channel = pkg.status.channels.find((c) => c.name === channelName);
  const modes = offeredInstallModes(channel);
  const [mode, setMode] = useState<InstallMode | undefined>(modes[0]);
  const [target, setTarget] = useState(mode ? defaultInstallNamespace(mode, channel, namespace) : namespace);
  const [approval, setApproval] = useState<Approval>('Automatic');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const name = pkg.status.packageName;
  const id = (what: string) => `install-${what}`;

  const chooseChannel = (c: string) => {
    setChannelName(c);
    const next = offeredInstallModes(pkg.status.channels.find((x) => x.name === c));
    if (!mode || !next.includes(mode)) setMode(next[0]);
  };
  const chooseMode = (m: InstallMode) => {
    setMode(m);
    setTarget(defaultInstallNamespace(m, channel, namespace));
  };

  const install = async (e: Event) => {
    e.preventDefault();
    if (!channel || !mode) return;
    const problem = namespaceProblem(target.trim());
    if (problem) return setOutcome({ ok: false, message: problem });
    const into = target.trim();
    setBusy(true);
    setOutcome(undefined);
    try {
      const done: string[] = [];
      try {
        await getJSON(objectPath(kinds.namespaces, into));
      } catch (err) {
        // Not allowed to read it: it may well be there; the next requests say whether the user may install in it.
        if (err instanceof ApiError && err.code === 404) {
          await create(listPath(kinds.namespaces), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: into } });
          done.push(`namespace ${into} created`);
        } else if (!(err instanceof ApiError && err.forbidden)) {
          throw err;
        }
      }
      const groups = await getJSON<{ items?: api.OperatorGroup[] }>(listPath(kinds.operatorGroups, into));
      const plan = operatorGroupPlan(mode, into, groups.items ?? []);
      if ('problem' in plan) throw new Error(plan.problem);
      if ('create' in plan) {
        const made = await create<api.OperatorGroup>(listPath(kinds.operatorGroups, into), plan.create);
        done.push(`OperatorGroup ${made.metadata.name} created`);
      } else {
        done.push(`OperatorGroup ${plan.use} used`);
      }
      await create(listPath(kinds.subscriptions, into), subscriptionFor(pkg, channel, into, approval));
      setOutcome({ ok: true, message: `Subscription ${name} created in ${into} (${done.join(', ')}).${approval === 'Manual' ? ' Its InstallPlan waits for your approval on Installed Operators.' : ''}` });
    } catch (err) {
      setOutcome({ ok: false, message: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card install" aria-labelledby="install-title">
      <h2 id="install-title" tabIndex={-1} ref={heading}>Install {displayName(pkg)}</h2>
      <p>
        Package <code>{name}</code> from catalog {pkg.status.catalogSourceDisplayName || pkg.status.catalogSource} ({pkg.status.catalogSourceNamespace}).
        {channel?.currentCSVDesc?.description ? ` ${channel.currentCSVDesc.description}` : ''}
      </p>
      <form class="update-form" onSubmit={install}>
        <fieldset>
          <legend>Update channel</legend>
          {pkg.status.channels.map((c) => (
            <div key={c.name}>
              <input type="radio" id={id(`channel-${c.name}`)} name="channel" value={c.name} checked={c.name === channelName} onChange={() => chooseChannel(c.name)} />
              <label for={id(`channel-${c.name}`)}>{c.name} ({show(c.currentCSVDesc?.version)}){c.name === pkg.status.defaultChannel ? ', the default' : ''}</label>
            </div>
          ))}
        </fieldset>
        <fieldset>
          <legend>Installation mode</legend>
          {modes.length === 0 && <p class="notice notice-warning">The head of channel {channelName} supports neither AllNamespaces nor OwnNamespace installs, the two the console makes.</p>}
          {modes.map((m) => (
            <div key={m}>
              <input type="radio" id={id(`mode-${m}`)} name="mode" value={m} checked={m === mode} onChange={() => chooseMode(m)} />
              <label for={id(`mode-${m}`)}>{MODE_LABELS[m]}</label>
            </div>
          ))}
        </fieldset>
        <p>
          <label for={id('namespace')}>Installed namespace</label>{' '}
          <input id={id('namespace')} value={target} readOnly={mode === 'AllNamespaces'} aria-describedby={id('namespace-help')} onInput={(ev) => setTarget((ev.target as HTMLInputElement).value)} />
          <span id={id('namespace-help')} class="muted">
            {mode === 'AllNamespaces' ? ' Operators for all namespaces are installed here.' : ' Made if it does not exist; the operator watches this namespace only.'}
          </span>
        </p>
        <fieldset>
          <legend>Update approval</legend>
          {(['Automatic', 'Manual'] as const).map((a) => (
            <div key={a}>
              <input type="radio" id={id(`approval-${a}`)} name="approval" value={a} checked={a === approval} onChange={() => setApproval(a)} />
              <label for={id(`approval-${a}`)}>{a}{a === 'Manual' ? ' (each InstallPlan waits for an Approve)' : ''}</label>
            </div>
          ))}
        </fieldset>
        <p class="actions">
          <button type="submit" disabled={busy || !mode || !channel}>Install</button>{' '}
          <button type="button" class="secondary" onClick={onClose}>Close</button>
          <Outcome outcome={outcome} />
          {outcome?.ok && <> <a href="#/installed-operators">Installed Operators</a></>}
        </p>
      </form>
    </section>
  );
}

/** What a 404 for OLM's kinds means. */
function NoOlm() {
  return <p class="notice notice-warning" role="status">This cluster does not serve OLM's API (<code>operators.coreos.com</code>): OperatorHub needs the Operator Lifecycle Manager.</p>;
}

export function OperatorHub({ namespace }: { namespace: string }) {
  const catalogs = useList<api.CatalogSource>(listPath(kinds.catalogSources, namespace));
  // The packages follow the catalogs: a catalog turning READY, or its ConfigMap changing, is read again.
  const catalogsVersion = catalogs.items.map((c) => `${key(c)}@${c.metadata.resourceVersion}`).join(',');
  const packages = usePackages(namespace, catalogsVersion);
  const [chosen, setChosen] = useState<string>();
  const pkg = packages.items.find((p) => packageKey(p) === chosen);
  const where = namespace ? ` in ${namespace}` : '';
  return (
    <Page title="OperatorHub">
      <h2>Catalogs</h2>
      {catalogs.error?.code === 404 && <NoOlm />}
      <ListBody state={catalogs} kind={kinds.catalogSources} namespace={namespace}>
        <Table
          caption={`${catalogs.items.length} catalog sources${where}, live`}
          rows={catalogs.items}
          rowKey={key}
          columns={[
            { title: 'Namespace', cell: ns },
            { title: 'Name', cell: (c) => c.metadata.name },
            { title: 'Display name', cell: (c) => show(c.spec.displayName) },
            { title: 'Publisher', cell: (c) => show(c.spec.publisher) },
            { title: 'Type', cell: (c) => c.spec.sourceType },
            { title: 'State', cell: (c) => <span class={`badge badge-${c.status?.connectionState?.lastObservedState === 'READY' ? 'ok' : 'unknown'}`}>{show(c.status?.connectionState?.lastObservedState)}</span> },
            { title: 'Message', cell: (c) => show(c.status?.message) },
          ]}
        />
      </ListBody>
      <h2>Packages</h2>
      {packages.error?.code === 404 ? (
        <div class="notice notice-warning" role="status">
          <p><strong>No package server here.</strong> The packages come from OLM's package server, served as <code>packages.operators.coreos.com/v1</code> through the API server; this cluster does not serve it (OLM is not installed, or its package server is not running).</p>
          <p class="api-message">The API server said: {packages.error.message}</p>
        </div>
      ) : packages.error ? (
        <ApiProblem error={packages.error} kind={kinds.packageManifests} namespace={namespace} what="packages" />
      ) : !packages.loaded ? (
        <p class="loading" role="status">Loading packages…</p>
      ) : (
        <Table
          caption={`${packages.items.length} packages${namespace ? ` offered in ${namespace}` : ''} (read again when a catalog changes)`}
          rows={packages.items}
          rowKey={packageKey}
          empty="No packages: no catalog is READY here."
          columns={[
            { title: 'Package', cell: (p) => p.status.packageName },
            { title: 'Display name', cell: displayName },
            { title: 'Version', cell: (p) => show(defaultChannelOf(p)?.currentCSVDesc?.version) },
            { title: 'Provider', cell: (p) => show(p.status.provider?.name) },
            { title: 'Catalog', cell: (p) => `${p.status.catalogSourceDisplayName || p.status.catalogSource} (${p.status.catalogSourceNamespace})` },
            { title: 'Default channel', cell: (p) => p.status.defaultChannel },
            { title: 'Channels', cell: (p) => p.status.channels.map((c) => c.name).join(', ') },
            { title: 'Install modes', cell: (p) => offeredInstallModes(defaultChannelOf(p)).join(', ') || '-' },
            { title: 'Install', cell: (p) => <button type="button" onClick={() => setChosen(packageKey(p))} aria-label={`Install ${p.status.packageName}`}>Install</button> },
          ]}
        />
      )}
      {pkg && <InstallForm key={chosen} pkg={pkg} namespace={namespace} onClose={() => setChosen(undefined)} />}
    </Page>
  );
}

function ApproveButton({ plan }: { plan: api.InstallPlan }) {
  const [outcome, setOutcome] = useState<{ ok: boolean; message: string }>();
  const approve = async () => {
    try {
      await mergePatch(objectPath(kinds.installPlans, plan.metadata.name, plan.metadata.namespace), { spec: { approved: true } });
      setOutcome({ ok: true, message: 'approved' });
    } catch (e) {
      setOutcome({ ok: false, message: (e as Error).message });
    }
  };
  if (plan.spec.approved) return <span class="muted">approved</span>;
  return (
    <>
      <button type="button" onClick={approve} aria-label={`Approve install plan ${plan.metadata.name}`}>Approve</button>
      <Outcome outcome={outcome} />
    </>
  );
}

export function InstalledOperators({ namespace }: { namespace: string }) {
  const plans = useList<api.InstallPlan>(listPath(kinds.installPlans, namespace));
  const subs = useList<api.Subscription>(listPath(kinds.subscriptions, namespace));
  const csvs = useList<api.ClusterServiceVersion>(listPath(kinds.clusterServiceVersions, namespace));
  const where = namespace ? ` in ${namespace}` : '';
  // Across all namespaces each operator is shown once, as OpenShift's console does: the copies OLM
  // writes into an operator's target namespaces (label olm.copiedFrom) only in a namespace's view.
  const installed = namespace ? csvs.items : csvs.items.filter((c) => !c.metadata.labels?.['olm.copiedFrom']);
  const copies = csvs.items.length - installed.length;
  const waiting = plans.items.filter((p) => p.status?.phase === 'RequiresApproval' && !p.spec.approved).length;
  return (
    <Page title="Installed Operators">
      {csvs.error?.code === 404 && <NoOlm />}
      <h2>ClusterServiceVersions</h2>
      <ListBody state={csvs} kind={kinds.clusterServiceVersions} namespace={namespace}>
        <Table
          caption={`${installed.length} operators installed${where}${copies ? ` (${copies} copies in their target namespaces not shown)` : ''}, live`}
          rows={installed}
          rowKey={key}
          empty="No operator installed here."
          columns={[
            { title: 'Namespace', cell: ns },
            { title: 'Name', cell: (c) => c.metadata.name },
            { title: 'Display name', cell: (c) => show(c.spec.displayName) },
            { title: 'Version', cell: (c) => show(c.spec.version) },
            { title: 'Phase', cell: (c) => <PhaseBadge phase={c.status?.phase} /> },
            { title: 'Reason', cell: (c) => show(c.status?.reason) },
            { title: 'Message', cell: (c) => show(c.status?.message) },
            { title: 'Since', cell: (c) => <Age time={c.status?.lastTransitionTime} /> },
          ]}
        />
      </ListBody>
      <h2>Install plans</h2>
      <ListBody state={plans} kind={kinds.installPlans} namespace={namespace}>
        {waiting > 0 && <p class="notice notice-warning" role="status">{waiting === 1 ? '1 install plan waits' : `${waiting} install plans wait`} for approval.</p>}
        <Table
          caption={`${plans.items.length} install plans${where}, ${waiting} awaiting approval, live`}
          rows={plans.items}
          rowKey={key}
          columns={[
            { title: 'Namespace', cell: ns },
            { title: 'Name', cell: (p) => p.metadata.name },
            { title: 'Operators', cell: (p) => p.spec.clusterServiceVersionNames.join(', ') },
            { title: 'Approval', cell: (p) => p.spec.approval },
            { title: 'Phase', cell: (p) => <PhaseBadge phase={p.status?.phase} /> },
            { title: 'Message', cell: (p) => show(p.status?.message) },
            { title: 'Age', cell: (p) => <Age time={p.metadata.creationTimestamp} /> },
            { title: 'Approve', cell: (p) => (p.spec.approval === 'Manual' && (p.status?.phase === 'RequiresApproval' || !p.status?.phase) ? <ApproveButton plan={p} /> : <span class="muted">-</span>) },
          ]}
        />
      </ListBody>
      <h2>Subscriptions</h2>
      <ListBody state={subs} kind={kinds.subscriptions} namespace={namespace}>
        <Table
          caption={`${subs.items.length} subscriptions${where}, live`}
          rows={subs.items}
          rowKey={key}
          columns={[
            { title: 'Namespace', cell: ns },
            { title: 'Name', cell: (s) => s.metadata.name },
            { title: 'Package', cell: (s) => s.spec.name },
            { title: 'Catalog', cell: (s) => `${s.spec.source} (${s.spec.sourceNamespace})` },
            { title: 'Channel', cell: (s) => show(s.spec.channel) },
            { title: 'Approval', cell: (s) => show(s.spec.installPlanApproval ?? 'Automatic') },
            { title: 'State', cell: (s) => show(s.status?.state) },
            { title: 'Installed', cell: (s) => show(s.status?.installedCSV) },
            { title: 'Latest', cell: (s) => show(s.status?.currentCSV) },
            { title: 'Install plan', cell: (s) => show(s.status?.installPlanRef?.name) },
          ]}
        />
      </ListBody>
    </Page>
  );
}
