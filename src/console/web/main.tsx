// The console's page: a login form until a bearer token is given (and accepted by the API
// server), then the navigation, the namespace chooser (for namespaced lists) and the page of the
// address's hash (#/settings, #/nodes, …). Nothing but the login form is shown without a token.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, onUnauthorised, session, whoAmI } from './api.js';
import { Overview } from './pages/overview.js';
import { ClusterSettings } from './pages/settings.js';
import { ClusterOperators } from './pages/operators.js';
import { MachineConfigPools, MachineConfigs } from './pages/pools.js';
import { Nodes } from './pages/nodes.js';
import { Machines, MachineSets, MachineHealthChecks } from './pages/machines.js';
import { WorkloadClusters } from './pages/clusters.js';
import { InstalledOperators, OperatorHub } from './pages/operatorhub.js';

interface Route {
  path: string;
  title: string;
  page: (props: { namespace: string }) => preact.JSX.Element;
  namespaced?: boolean;
}

const ROUTES: Route[] = [
  { path: '/', title: 'Overview', page: Overview },
  { path: '/settings', title: 'Cluster Settings', page: ClusterSettings },
  { path: '/clusteroperators', title: 'Cluster Operators', page: ClusterOperators },
  { path: '/machineconfigpools', title: 'MachineConfigPools', page: MachineConfigPools },
  { path: '/machineconfigs', title: 'MachineConfigs', page: MachineConfigs },
  { path: '/nodes', title: 'Nodes', page: Nodes },
  { path: '/machines', title: 'Machines', page: Machines, namespaced: true },
  { path: '/machinesets', title: 'MachineSets and MachineDeployments', page: MachineSets, namespaced: true },
  { path: '/machinehealthchecks', title: 'MachineHealthChecks', page: MachineHealthChecks, namespaced: true },
  { path: '/clusters', title: 'Workload Clusters', page: WorkloadClusters, namespaced: true },
  { path: '/operatorhub', title: 'OperatorHub', page: OperatorHub, namespaced: true },
  { path: '/installed-operators', title: 'Installed Operators', page: InstalledOperators, namespaced: true },
];

const currentPath = () => location.hash.replace(/^#/, '') || '/';
const NAMESPACE_KEY = 'bosun-console-namespace';

function Login({ problem, onSignedIn }: { problem?: string; onSignedIn: (user: string) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState(problem);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    session.signIn(token.trim());
    try {
      const me = await whoAmI();
      onSignedIn(me.username);
    } catch (err) {
      session.signOut();
      setError(err instanceof ApiError && err.code === 401 ? `The API server does not accept this token: ${err.message}` : `Cannot log in: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>bosun console</h1>
      <form onSubmit={submit} aria-describedby="login-help">
        <p id="login-help">
          Log in with a bearer token. Every request goes to the API server as you, so you see what your roles let you see.
          Get one with <code>kubectl create token &lt;serviceaccount&gt; -n &lt;namespace&gt;</code>, or the token of your kubeconfig.
          It is kept in this browser tab only.
        </p>
        <label for="token">Bearer token</label>
        <input id="token" name="token" type="password" autocomplete="off" required value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
        <button type="submit" disabled={busy || !token.trim()}>Log in</button>
        {error && <p class="notice notice-error" role="alert">{error}</p>}
      </form>
    </main>
  );
}

function App() {
  const [user, setUser] = useState<string | undefined>();
  const [checking, setChecking] = useState(Boolean(session.token()));
  const [problem, setProblem] = useState<string | undefined>();
  const [path, setPath] = useState(currentPath());
  const [namespace, setNamespace] = useState(sessionStorage.getItem(NAMESPACE_KEY) ?? '');
  const [namespaceInput, setNamespaceInput] = useState(namespace);

  useEffect(() => {
    const onHash = () => setPath(currentPath());
    addEventListener('hashchange', onHash);
    const off = onUnauthorised(() => {
      session.signOut();
      setUser(undefined);
      setProblem('Your token is no longer accepted by the API server: log in again.');
    });
    if (session.token()) {
      whoAmI().then((me) => setUser(me.username)).catch(() => session.signOut()).finally(() => setChecking(false));
    }
    return () => {
      removeEventListener('hashchange', onHash);
      off();
    };
  }, []);

  if (checking) return <main><p role="status">Checking your session…</p></main>;
  if (!user) return <Login problem={problem} onSignedIn={(name) => { setProblem(undefined); setUser(name); }} />;

  const route = ROUTES.find((r) => r.path === path) ?? ROUTES[0];
  const Current = route.page;
  document.title = `${route.title} · bosun console`;
  const chooseNamespace = (e: Event) => {
    e.preventDefault();
    const ns = namespaceInput.trim();
    sessionStorage.setItem(NAMESPACE_KEY, ns);
    setNamespace(ns);
  };
  return (
    <div class="shell">
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <span class="brand">bosun console</span>
        <form class="namespace" onSubmit={chooseNamespace}>
          <label for="namespace">Namespace</label>
          <input id="namespace" placeholder="all namespaces" value={namespaceInput} onInput={(e) => setNamespaceInput((e.target as HTMLInputElement).value)} />
          <button type="submit">Show</button>
        </form>
        <span class="user">Logged in as <strong>{user}</strong></span>
        <button type="button" onClick={() => { session.signOut(); setUser(undefined); }}>Log out</button>
      </header>
      <nav aria-label="Console">
        <ul>
          {ROUTES.map((r) => (
            <li key={r.path}><a href={`#${r.path}`} aria-current={r.path === route.path ? 'page' : undefined}>{r.title}</a></li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <Current key={`${route.path}|${namespace}`} namespace={route.namespaced ? namespace : ''} />
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
