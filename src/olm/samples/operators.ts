// bosun's two sample add-on operators, shipped in the default catalog (bosun-operators) and run by
// the node agent as the components `bosun greeter-operator` and `bosun echo-operator` (images
// bosun.local/greeter-operator and bosun.local/echo-operator in their bundles' Deployments):
//   - greeter: a Greeting (greeter.samples.bosun.io/v1) gets a ConfigMap <name>-greeting holding
//     "<greeting>, <spec.name>!";
//   - echo: an EchoServer (echo.samples.bosun.io/v1) gets a Deployment <name>-echo of the built-in
//     echo server (bosun.local/echo) with spec.replicas pods, and a Service <name>-echo on 8080.
// Each writes its resource's status: phase (Ready, Progressing, Failed with a message), the
// operator's own version (from its bundle's Deployment, --operator-version) and observedGeneration.
// They watch the namespaces OLM gives them (the olm.targetNamespaces annotation, through the
// downward API into WATCH_NAMESPACE: "" is all namespaces), so every install mode they declare —
// OwnNamespace, SingleNamespace, AllNamespaces — is served.
import type * as api from '../../api/index.js';
import { Controller, type Informer, type Manager, type ResourceDefinition, applyObject, controllerReference, enqueueOwner, isNotFound, realClock, resources, type Clock } from '../../kube/index.js';
import { jsonEqual } from '../../common/json.js';

export const GREETER_GROUP = 'greeter.samples.bosun.io';
export const ECHO_GROUP = 'echo.samples.bosun.io';
export const greetings: ResourceDefinition<api.Greeting> = { group: GREETER_GROUP, version: 'v1', resource: 'greetings', kind: 'Greeting', namespaced: true };
export const echoServers: ResourceDefinition<api.EchoServer> = { group: ECHO_GROUP, version: 'v1', resource: 'echoservers', kind: 'EchoServer', namespaced: true };

export interface SampleOperatorOptions {
  /** The version this operator is (its bundle's), written in every status it writes. */
  operatorVersion: string;
  /** The namespaces to serve, as olm.targetNamespaces says them: "a,b", or "" for all. */
  watchNamespaces: string;
  clock?: Clock;
}

/** "a,b" → ["a", "b"]; "" → [undefined] (all namespaces: one cluster-wide informer). */
export function watchedNamespaces(value: string): Array<string | undefined> {
  const list = value.split(',').map((s) => s.trim()).filter(Boolean);
  return list.length > 0 ? [...new Set(list)] : [undefined];
}

type Operand = api.KubeObject & { status?: api.SampleOperandStatus };

/**
 * A controller reconciling `resource` in the watched namespaces: `reconcile` makes what the object
 * stands for and returns its status (without the common fields); owned objects of `owns` map back.
 */
function sampleController<T extends Operand>(
  manager: Manager, o: SampleOperatorOptions, name: string, resource: ResourceDefinition<T>,
  owns: ResourceDefinition<api.KubeObject>[],
  reconcile: (object: T, owned: (r: ResourceDefinition<api.KubeObject>, name: string, namespace: string) => api.KubeObject | undefined) => Promise<NonNullable<T['status']>>,
): Controller {
  const namespaces = watchedNamespaces(o.watchNamespaces);
  const informers = namespaces.map((namespace) => manager.informers.forResource(resource, namespace ? { namespace } : {}));
  const ownedInformers = owns.map((r) => ({ r, informers: namespaces.map((namespace) => manager.informers.forResource(r, namespace ? { namespace } : {})) }));
  const find = <X extends api.KubeObject>(list: Informer<X>[], objectName: string, namespace: string) => list.map((i) => i.get(objectName, namespace)).find(Boolean);
  const controller = new Controller({
    name,
    clock: o.clock ?? realClock,
    sync: async (key) => {
      const [namespace, objectName] = key.split('/');
      const object = find(informers, objectName, namespace);
      if (!object || object.metadata.deletionTimestamp) return;
      const owned = (r: ResourceDefinition<api.KubeObject>, n: string, ns: string) => find(ownedInformers.find((x) => x.r === r)?.informers ?? [], n, ns);
      let status: NonNullable<T['status']>;
      try {
        status = await reconcile({ ...object, apiVersion: `${resource.group}/${resource.version}`, kind: resource.kind }, owned);
      } catch (e) {
        if (!(e instanceof SpecError)) throw e;
        status = { phase: 'Failed', message: e.message } as NonNullable<T['status']>;
      }
      const full = { ...status, operatorVersion: o.operatorVersion, observedGeneration: object.metadata.generation };
      if (jsonEqual(full, object.status ?? {})) return;
      try {
        await manager.client.update(resource, { ...object, status: full }, 'status');
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    },
  });
  for (const informer of informers) controller.watch(informer);
  for (const { informers: list } of ownedInformers) for (const informer of list) controller.watch(informer, enqueueOwner({ group: resource.group, kind: resource.kind }));
  return controller;
}

/** Bad input in a resource's spec: said in its status (phase Failed), not retried. */
class SpecError extends Error {}

/** The greeter: a Greeting's ConfigMap. */
export function addGreeterOperator(manager: Manager, o: SampleOperatorOptions): Controller {
  const controller = sampleController(manager, o, 'greeting-controller', greetings, [resources.configMaps as ResourceDefinition<api.KubeObject>], async (greeting) => {
    const who = greeting.spec?.name?.trim();
    if (!who) throw new SpecError('spec.name is required: whom to greet');
    const text = `${greeting.spec?.greeting?.trim() || 'Hello'}, ${who}!`;
    const configMap = `${greeting.metadata.name}-greeting`;
    await applyObject<api.ConfigMap>(manager.client, {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: configMap, namespace: greeting.metadata.namespace, labels: { 'app.kubernetes.io/managed-by': 'greeter-operator' }, ownerReferences: [controllerReference(greeting)] },
      data: { greeting: text, operatorVersion: o.operatorVersion },
    }, resources.configMaps);
    return { phase: 'Ready', message: `ConfigMap ${configMap} holds the greeting`, configMap, text };
  });
  manager.add(controller);
  return controller;
}

/** The echo operator: an EchoServer's Deployment of bosun.local/echo and its Service. */
export function addEchoOperator(manager: Manager, o: SampleOperatorOptions): Controller {
  const deployments = resources.deployments as ResourceDefinition<api.KubeObject>;
  const controller = sampleController(manager, o, 'echoserver-controller', echoServers, [deployments], async (server, owned) => {
    const replicas = server.spec?.replicas ?? 1;
    if (!Number.isInteger(replicas) || replicas < 0 || replicas > 10) throw new SpecError(`spec.replicas must be a whole number from 0 to 10, got ${JSON.stringify(server.spec?.replicas)}`);
    const name = `${server.metadata.name}-echo`;
    const namespace = server.metadata.namespace;
    const labels = { app: name, 'app.kubernetes.io/managed-by': 'echo-operator' };
    const owner = [controllerReference(server)];
    await applyObject<api.Deployment>(manager.client, {
      apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name, namespace, labels, ownerReferences: owner },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels, annotations: { 'echo.samples.bosun.io/operator-version': o.operatorVersion } },
          spec: { containers: [{ name: 'echo', image: 'bosun.local/echo', ports: [{ name: 'http', containerPort: 8080 }] }] },
        },
      },
    }, resources.deployments);
    await applyObject<api.Service>(manager.client, {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name, namespace, labels, ownerReferences: owner },
      spec: { selector: { app: name }, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] },
    }, resources.services);
    const deployment = owned(deployments, name, namespace ?? '') as api.Deployment | undefined;
    const ready = deployment?.status?.readyReplicas ?? 0;
    return ready >= replicas
      ? { phase: 'Ready', message: `${ready} of ${replicas} echo pods ready behind Service ${name}`, readyReplicas: ready, service: name }
      : { phase: 'Progressing', message: `${ready} of ${replicas} echo pods ready`, readyReplicas: ready, service: name };
  });
  manager.add(controller);
  return controller;
}
