// bosun's sample add-on operators, as components the node agent runs from their bundles'
// Deployments (images bosun.local/greeter-operator and bosun.local/echo-operator):
//   `bosun greeter-operator`  Greetings (greeter.samples.bosun.io/v1) → a ConfigMap each
//   `bosun echo-operator`     EchoServers (echo.samples.bosun.io/v1) → a Deployment of bosun.local/echo and a Service
// Installed through OLM from the default catalog bosun-operators (src/olm/samples/catalog.ts).
import type { Command } from 'commander';
import { registerComponent } from '../kube/manager-flags.js';

interface Options {
  operatorVersion: string;
  watchNamespaces: string;
}

const SAMPLES = {
  'greeter-operator': {
    description: 'run the sample greeter operator: each Greeting (greeter.samples.bosun.io/v1) gets a ConfigMap <name>-greeting with its greeting, and a status',
    example: `  $ kubectl apply -n demo -f - <<'EOF'
  apiVersion: greeter.samples.bosun.io/v1
  kind: Greeting
  metadata: {name: hello}
  spec: {name: world}
  EOF
  $ kubectl get greetings -n demo
  NAME    TEXT            PHASE   OPERATOR   AGE
  hello   Hello, world!   Ready   1.0.0      5s`,
  },
  'echo-operator': {
    description: 'run the sample echo operator: each EchoServer (echo.samples.bosun.io/v1) gets a Deployment of the echo server (bosun.local/echo) and a Service on 8080, and a status',
    example: `  $ kubectl apply -n demo -f - <<'EOF'
  apiVersion: echo.samples.bosun.io/v1
  kind: EchoServer
  metadata: {name: echo}
  spec: {replicas: 2}
  EOF
  $ kubectl get echoservers -n demo
  NAME   READY   PHASE   OPERATOR   AGE
  echo   2       Ready   1.1.0      20s`,
  },
} as const;

export function register(program: Command): void {
  for (const [name, sample] of Object.entries(SAMPLES)) {
    if (program.commands.some((c) => c.name() === name)) continue;
    registerComponent<Options>(program, {
      name,
      lease: { namespace: 'openshift-operators', name },
      defaults: { leaderElect: false },
      description: sample.description,
      flags: (command) => command
        .requiredOption('--operator-version <version>', 'the version this operator is (its bundle\'s), written in every status')
        .option('--watch-namespaces <a,b>', 'the namespaces to serve, as OLM\'s olm.targetNamespaces says them; "" for all (default: $WATCH_NAMESPACE)', process.env.WATCH_NAMESPACE ?? ''),
      help: `
Installed by OLM from the default catalog (bosun-operators); its bundle's Deployment passes
--operator-version and projects the olm.targetNamespaces annotation into $WATCH_NAMESPACE, so it
serves the namespaces of its OperatorGroup (OwnNamespace, SingleNamespace or AllNamespaces).

Example (installed with \`bosun adm operators install ${name.replace(/-operator$/, '')} -n demo\`):
${sample.example}`,
      async setup(manager, o) {
        if (!/^\d+\.\d+\.\d+/.test(o.operatorVersion)) throw new Error(`--operator-version must be a semantic version such as 1.0.0, got "${o.operatorVersion}"`);
        const samples = await import('../olm/samples/operators.js');
        const settings = { operatorVersion: o.operatorVersion, watchNamespaces: o.watchNamespaces };
        if (name === 'greeter-operator') samples.addGreeterOperator(manager, settings);
        else samples.addEchoOperator(manager, settings);
      },
    });
  }
}
