// Cluster API's webhook server, as controller-runtime's webhook.Server serves it in the process
// that runs the controllers: HTTPS (the service CA's certificate for the Service
// capi-controllers, from --webhook-cert-dir's tls.crt/tls.key, read again when it changes; a
// self-signed one without), one path per kind and verb (webhooks.ts) and KubeadmControlPlane's
// scale validator, on every replica (it needs no leadership). A mutating path answers an AdmissionReview with the JSONPatch from the object to
// its defaulted self; a validating path refuses with a 422 Invalid Status naming every field, as
// controller-runtime answers an apierrors.NewInvalid. The webhook configurations that send
// requests here are in the payload (0000_30_cluster-api_05_webhooks.yaml, webhookConfigurations()).
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import type * as api from '../api/index.js';
import { closeServer, listenOn, sendJson } from '../common/http-server.js';
import { logger } from '../common/log.js';
import type { Listen, Runnable } from '../kube/index.js';
import { ServingCertificate } from '../kube/serving-certificate.js';
import { CLUSTER_API_WEBHOOKS, KCP_SCALE_WEBHOOK, jsonPatch, kcpScaleRefusal, webhookName, webhookPath, type KindWebhooks } from './webhooks.js';

const log = logger('capi-webhooks');

/** What a validating webhook answers for problems: kube's Invalid status over the kind. */
function invalidStatus(w: KindWebhooks, name: string, problems: string[]): NonNullable<api.AdmissionResponse['status']> {
  const summary = problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`;
  return {
    status: 'Failure', code: 422, reason: 'Invalid',
    message: `${w.kind}.${w.group} "${name}" is invalid: ${summary}`,
    details: {
      name, group: w.group, kind: w.kind,
      causes: problems.map((p) => {
        const at = p.indexOf(': ');
        const detail = p.slice(at + 2);
        const type = detail.startsWith('Forbidden') ? 'FieldValueForbidden' : detail.startsWith('Required') ? 'FieldValueRequired' : detail.startsWith('Unsupported') ? 'FieldValueNotSupported' : 'FieldValueInvalid';
        return { reason: type, message: detail, field: p.slice(0, at) };
      }),
    },
  };
}

/** The answer to one AdmissionReview at one path. */
export function review(which: 'mutate' | 'validate', w: KindWebhooks, request: api.AdmissionRequest): api.AdmissionResponse {
  const uid = request.uid;
  const object = request.object as api.Unstructured | null | undefined;
  const old = (request.oldObject ?? undefined) as api.Unstructured | undefined;
  if (request.operation === 'DELETE' || !object) return { uid, allowed: true };
  if (which === 'mutate') {
    const defaulted = w.default(object, old ?? undefined);
    const patch = jsonPatch(object, defaulted);
    return patch.length === 0 ? { uid, allowed: true } : { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
  }
  const problems = w.validate(object, old ?? undefined);
  if (problems.length === 0) return { uid, allowed: true };
  return { uid, allowed: false, status: invalidStatus(w, object.metadata?.name ?? '', problems) };
}

/**
 * The answer of the KubeadmControlPlane scale validator to a review of a Scale: it reads the
 * KubeadmControlPlane (whether its etcd is external) through `read`, and refuses as Cluster API
 * does, with 403 Forbidden naming why.
 */
export async function reviewKcpScale(request: api.AdmissionRequest, read: (namespace: string, name: string) => Promise<api.KubeadmControlPlane | undefined>): Promise<api.AdmissionResponse> {
  const uid = request.uid;
  const scale = request.object as { metadata?: { name?: string; namespace?: string }; spec?: { replicas?: number } } | null | undefined;
  if (request.operation !== 'UPDATE' || !scale) return { uid, allowed: true };
  const namespace = scale.metadata?.namespace ?? request.namespace ?? '';
  const name = scale.metadata?.name ?? request.name ?? '';
  const kcp = await read(namespace, name);
  if (!kcp) return { uid, allowed: false, status: { code: 500, message: `failed to get KubeadmControlPlane ${namespace}/${name}: not found` } };
  const refusal = kcpScaleRefusal(scale.spec?.replicas ?? 0, kcp);
  return refusal ? { uid, allowed: false, status: { status: 'Failure', code: 403, reason: 'Forbidden', message: refusal } } : { uid, allowed: true };
}

export interface WebhookServerOptions {
  listen: Listen;
  /** How the KubeadmControlPlane scale validator reads the object a Scale is of (without it, that path answers 500). */
  readKubeadmControlPlane?: (namespace: string, name: string) => Promise<api.KubeadmControlPlane | undefined>;
  /** A directory with tls.crt and tls.key (the serving Secret mounted); omitted: self-signed. */
  certDir?: string;
}

/** The server as a manager runnable; `address` is where it listens once started (tests bind port 0). */
export class ClusterApiWebhookServer implements Runnable {
  readonly name = 'capi-webhook-server';
  readonly needsLeaderElection = false;
  private server?: Server;
  private certificate?: ServingCertificate;
  private readonly routes = new Map<string, { which: 'mutate' | 'validate'; webhooks: KindWebhooks }>();
  private readonly started: Promise<void>;
  private markStarted!: () => void;

  constructor(private readonly options: WebhookServerOptions) {
    for (const w of CLUSTER_API_WEBHOOKS) for (const which of ['mutate', 'validate'] as const) this.routes.set(webhookPath(which, w), { which, webhooks: w });
    this.started = new Promise((resolve) => (this.markStarted = resolve));
  }

  /** Resolves once listening. */
  get listening(): Promise<void> {
    return this.started;
  }

  /** The certificate served (PEM, with its CA when self-signed): what a caBundle trusts. */
  get certificatePem(): string | undefined {
    return this.certificate?.current().cert;
  }

  get address(): { host: string; port: number } | undefined {
    const a = this.server?.address();
    return a && typeof a === 'object' ? { host: a.address, port: a.port } : undefined;
  }

  async start(signal: AbortSignal): Promise<void> {
    const files = this.options.certDir ? { certFile: join(this.options.certDir, 'tls.crt'), keyFile: join(this.options.certDir, 'tls.key') } : undefined;
    this.certificate = await ServingCertificate.load(files, [this.options.listen.host]);
    const server = createServer({ ...this.certificate.current() }, (req, res) => {
      const answer = (code: number, body: unknown) => sendJson(res, { code, body });
      const path = new URL(req.url ?? '/', 'https://webhook').pathname;
      const route = this.routes.get(path);
      const scale = path === KCP_SCALE_WEBHOOK.path;
      if (!route && !scale) return answer(404, { message: `no webhook at ${req.url}` });
      if (req.method !== 'POST') return answer(405, { message: 'webhooks take POST' });
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d) => (body += d));
      req.on('end', async () => {
        let request: api.AdmissionRequest | undefined;
        try {
          request = (JSON.parse(body) as api.AdmissionReview).request;
        } catch (e) {
          return answer(400, { message: `the body is not an AdmissionReview: ${(e as Error).message}` });
        }
        if (!request?.uid) return answer(400, { message: 'the AdmissionReview has no request' });
        let response: api.AdmissionResponse;
        try {
          if (route) response = review(route.which, route.webhooks, request);
          else {
            const read = this.options.readKubeadmControlPlane;
            if (!read) throw new Error('this webhook server reads no KubeadmControlPlanes');
            response = await reviewKcpScale(request, read);
          }
        } catch (e) {
          // A webhook that fails on input it did not expect answers 500 in the review, as controller-runtime's admission.Errored.
          log.warn({ webhook: route ? webhookName(route.which, route.webhooks) : KCP_SCALE_WEBHOOK.name, err: (e as Error).message }, 'webhook failed');
          response = { uid: request.uid, allowed: false, status: { code: 500, message: (e as Error).message } };
        }
        answer(200, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });
      });
    });
    this.server = server;
    this.certificate.onChange((pair) => server.setSecureContext(pair));
    await listenOn(server, this.options.listen.port, this.options.listen.host);
    log.info({ address: this.address }, 'Cluster API webhooks listening');
    this.markStarted();
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
  }

  async stop(): Promise<void> {
    this.certificate?.close();
    if (this.server) await closeServer(this.server);
  }
}
