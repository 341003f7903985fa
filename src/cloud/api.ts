// The local cloud's HTTP API (JSON over fastify). Every error is `{"error":{"code","message"}}`
// with the status that classifies it: 400 bad request, 401 no or unknown credential (AuthFailure),
// 403 an action the caller's identity does not hold (UnauthorizedOperation, naming both), 404
// unknown object or path, 409 wrong state or taken name/address.
//
// Every /v1 route names the action it needs (actions.ts); the caller sends its credential as
// `Authorization: Bearer <key id>.<secret>` (credentials.ts), and every such request, allowed or
// not, is a line of the audit log (audit.ts). /healthz needs nothing.
//
//   GET  /healthz
//   GET  /v1/instance-types                 GET /v1/zones
//   GET  /v1/instances[?state=a,b&name=x&id=i-…]    POST /v1/instances
//   GET  /v1/instances/:id                  DELETE /v1/instances/:id (terminate)
//   POST /v1/instances/:id/{start,stop,reboot,terminate}
//   GET  /v1/loadbalancers                  GET|PUT|DELETE /v1/loadbalancers/:name
//   GET  /v1/routes   POST /v1/routes       GET|DELETE /v1/routes/:name
//   GET  /v1/identity (the caller's own: any credential)
//   GET  /v1/credentials                    GET|PUT|DELETE /v1/credentials/:name   POST /v1/credentials/:name/rotate
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { answerClientError, clientErrorOf, REQUEST_LIMITS, REQUEST_TIMEOUT_MS } from '../common/http-limits.js';
import { allows, type CloudAction } from './actions.js';
import type { CloudAuditLog } from './audit.js';
import { INSTANCE_TYPES, REGION, ZONES } from './catalogue.js';
import type { LocalCloud } from './cloud.js';
import type { CloudIdentity, CredentialStore } from './credentials.js';
import { CloudError } from './errors.js';
import { OPERATIONS, type Operation } from './lifecycle.js';
import type { Network } from './network.js';
import type { InstanceState } from './types.js';

function listParam(v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).map((x) => x.trim()).filter(Boolean);
}

/** The error body for a status the framework or Node's parser chose. */
function problem(status: number, message: string): { error: { code: string; message: string } } {
  const code = status >= 500 ? 'InternalError' : status === 413 ? 'RequestTooLarge' : status === 408 ? 'RequestTimeout' : 'InvalidRequest';
  return { error: { code, message } };
}

/** What a route needs: an action, one that depends on the request, or (null) only a credential. */
type ActionRule = CloudAction | null | ((req: FastifyRequest) => CloudAction | null);
const needs = (action: ActionRule) => ({ config: { action } });

/** The caller and the action of each authenticated request, for the audit log. */
interface Attempt { identity?: CloudIdentity; action: string }

export interface CloudApiAuth { credentials: CredentialStore; audit: CloudAuditLog }

function bearerOf(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  const m = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

/** An instance operation's action; an unknown operation needs only a credential (and is a 404). */
function operationAction(req: FastifyRequest): CloudAction | null {
  const op = (req.params as { op?: string }).op as Operation;
  return OPERATIONS.includes(op) ? `instances:${op}` : null;
}

export function buildCloudApi(cloud: LocalCloud, network: Network, auth: CloudApiAuth): FastifyInstance {
  const app = Fastify({
    logger: false, bodyLimit: 256 * 1024,
    // Slow clients are cut off, and requests Node cannot parse answered in the API's own form (common/http-limits.ts).
    http: REQUEST_LIMITS, requestTimeout: REQUEST_TIMEOUT_MS,
    clientErrorHandler: (err, socket) => answerClientError(socket, clientErrorOf(err), ({ code, message }) => ({ contentType: 'application/json', body: JSON.stringify(problem(code, message)) })),
    frameworkErrors: (err, _req, reply) => void (reply as FastifyReply).code(400).send(problem(400, err.message)),
  });
  const attempts = new WeakMap<FastifyRequest, Attempt>();

  // Before the body is read: an unauthenticated request costs the cloud nothing more.
  app.addHook('onRequest', async (req) => {
    const rule = (req.routeOptions.config as { action?: ActionRule } | undefined)?.action;
    if (rule === undefined) return;
    const action = typeof rule === 'function' ? rule(req) : rule;
    const attempt: Attempt = { action: action ?? 'authenticate' };
    attempts.set(req, attempt);
    const bearer = bearerOf(req);
    if (!bearer) throw new CloudError(401, 'AuthFailure', `no credential: send "Authorization: Bearer <credential>" (${req.method} ${req.url.split('?')[0]} needs ${attempt.action}; the root credential is in <data-dir>/cloud/root.credential, components get theirs from a CredentialsRequest's Secret)`);
    attempt.identity = auth.credentials.authenticate(bearer);
    if (!attempt.identity) throw new CloudError(401, 'AuthFailure', 'the credential is not valid: no identity has it (deleted, rotated, or mistyped)');
    if (action && !allows(attempt.identity.actions, action)) {
      throw new CloudError(403, 'UnauthorizedOperation', `identity "${attempt.identity.name}" is not allowed to perform ${action} (${req.method} ${req.url.split('?')[0]}); it may: ${attempt.identity.actions.join(', ') || 'nothing'}`);
    }
  });
  app.addHook('onResponse', async (req, reply) => {
    const attempt = attempts.get(req);
    if (!attempt) return;
    auth.audit.record({
      time: new Date().toISOString(), identity: attempt.identity?.name ?? null, keyId: attempt.identity?.keyId ?? null, action: attempt.action,
      method: req.method, path: req.url.split('?')[0], status: reply.statusCode, remote: req.ip,
    });
  });

  app.setErrorHandler((error: FastifyError | CloudError, _req, reply) => {
    if (error instanceof CloudError) {
      if (error.status === 401) void reply.header('www-authenticate', 'Bearer realm="bosun-cloud"');
      return reply.code(error.status).send(error.toJSON());
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    return reply.code(status).send(problem(status, error.message));
  });
  app.setNotFoundHandler((req, reply) => reply.code(404).send({ error: { code: 'NotFound', message: `no such endpoint: ${req.method} ${req.url.split('?')[0]}` } }));

  app.get('/healthz', async () => 'ok');
  app.get('/v1/instance-types', needs('instances:describe'), async () => ({ instanceTypes: INSTANCE_TYPES }));
  app.get('/v1/zones', needs('instances:describe'), async () => ({ region: REGION, zones: ZONES }));

  app.get('/v1/instances', needs('instances:describe'), async (req) => {
    const q = req.query as Record<string, unknown>;
    const unknown = Object.keys(q).filter((k) => !['state', 'name', 'id'].includes(k));
    if (unknown.length) throw new CloudError(400, 'InvalidParameter', `unknown filter ${unknown.map((k) => `"${k}"`).join(', ')} (filters: state, name, id)`);
    return { instances: cloud.describeInstances({ states: listParam(q.state) as InstanceState[] | undefined, names: listParam(q.name), ids: listParam(q.id) }) };
  });
  app.post('/v1/instances', needs('instances:create'), async (req, reply) => reply.code(201).send(cloud.createInstance(req.body)));
  app.get('/v1/instances/:id', needs('instances:describe'), async (req) => cloud.getInstance((req.params as { id: string }).id));
  app.delete('/v1/instances/:id', needs('instances:terminate'), async (req) => cloud.operate('terminate', (req.params as { id: string }).id));
  app.post('/v1/instances/:id/:op', needs(operationAction), async (req) => {
    const { id, op } = req.params as { id: string; op: string };
    if (!OPERATIONS.includes(op as Operation)) throw new CloudError(404, 'NotFound', `no such instance operation "${op}" (operations: ${OPERATIONS.join(', ')})`);
    return cloud.operate(op as Operation, id);
  });

  app.get('/v1/loadbalancers', needs('loadbalancers:describe'), async () => {
    // What a change answered before the data plane carried it is not shown before it does.
    await network.applied();
    return { loadBalancers: network.listLoadBalancers().map((lb) => network.describe(lb)) };
  });
  app.get('/v1/loadbalancers/:name', needs('loadbalancers:describe'), async (req) => {
    await network.applied();
    return network.describe(network.getLoadBalancer((req.params as { name: string }).name));
  });
  app.put('/v1/loadbalancers/:name', needs('loadbalancers:manage'), async (req, reply) => {
    const { loadBalancer, created } = network.ensureLoadBalancer((req.params as { name: string }).name, req.body);
    // Answered once the data plane carries it (as it did when the balancers were in-process proxies).
    await network.applied();
    return reply.code(created ? 201 : 200).send(network.describe(loadBalancer));
  });
  app.delete('/v1/loadbalancers/:name', needs('loadbalancers:manage'), async (req) => {
    const deleted = network.deleteLoadBalancer((req.params as { name: string }).name);
    await network.applied();
    return deleted;
  });

  app.get('/v1/routes', needs('routes:describe'), async () => ({ routes: network.listRoutes() }));
  app.post('/v1/routes', needs('routes:manage'), async (req, reply) => reply.code(201).send(network.createRoute(req.body)));
  app.get('/v1/routes/:name', needs('routes:describe'), async (req) => network.getRoute((req.params as { name: string }).name));
  app.delete('/v1/routes/:name', needs('routes:manage'), async (req) => network.deleteRoute((req.params as { name: string }).name));

  const credentials = auth.credentials;
  const nameOf = (req: FastifyRequest) => (req.params as { name: string }).name;
  app.get('/v1/identity', needs(null), async (req) => attempts.get(req)!.identity);
  app.get('/v1/credentials', needs('credentials:manage'), async () => ({ identities: credentials.list() }));
  app.get('/v1/credentials/:name', needs('credentials:manage'), async (req) => credentials.get(nameOf(req)));
  app.put('/v1/credentials/:name', needs('credentials:manage'), async (req, reply) => {
    const result = credentials.put(nameOf(req), req.body);
    return reply.code(result.credential ? 201 : 200).send(result);
  });
  app.post('/v1/credentials/:name/rotate', needs('credentials:manage'), async (req) => credentials.rotate(nameOf(req)));
  app.delete('/v1/credentials/:name', needs('credentials:manage'), async (req) => credentials.delete(nameOf(req)));

  return app;
}
