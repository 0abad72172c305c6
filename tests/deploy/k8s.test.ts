import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { grpcTransportFromEnv, LIVENESS_SERVICE, SERVICE_CALL_POLICY } from '@crm/grpc-kit';

/**
 * deploy/k8s rendered as a cluster would get it: with `kubectl kustomize` when kubectl is installed, and always
 * with a small resolver of our own (resources, namespace, images, replicas), so the checks run without kubectl
 * too and the two renderings are compared. The list of services comes from the services/ folder: a new
 * service without its manifests fails here.
 */
const root = path.join(__dirname, '..', '..');
const k8s = path.join(root, 'deploy', 'k8s');
const SERVICES = readdirSync(path.join(root, 'services')).filter((d) => existsSync(path.join(root, 'services', d, 'package.json')));
const APP = SERVICES.filter((s) => s !== 'gateway');
const AUTOSCALED = ['gateway', 'chatnet-connector'];

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
};

const parseFile = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);

/** What `kustomize build` does for the fields this repository uses; strategic-merge patches are left out. */
function resolve(dir: string): Obj[] {
  const k = parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as {
    resources?: string[];
    namespace?: string;
    images?: { name: string; newName?: string; newTag?: string }[];
    replicas?: { name: string; count: number }[];
    labels?: { pairs: Record<string, string> }[];
  };
  let objs: Obj[] = [];
  for (const r of k.resources ?? []) {
    const p = path.join(dir, r);
    objs.push(...(statSync(p).isDirectory() ? resolve(p) : parseFile(p)));
  }
  objs = objs.map((o) => structuredClone(o));
  for (const o of objs) {
    for (const l of k.labels ?? []) o.metadata.labels = { ...o.metadata.labels, ...l.pairs };
    if (k.namespace && o.kind !== 'Namespace') o.metadata.namespace = k.namespace;
    if (o.kind !== 'Deployment') continue;
    const rep = k.replicas?.find((r) => r.name === o.metadata.name);
    if (rep) o.spec.replicas = rep.count;
    for (const c of o.spec.template.spec.containers) {
      const img = k.images?.find((i) => i.name === c.image.split(':')[0]);
      if (img) c.image = `${img.newName ?? img.name}${img.newTag ? `:${img.newTag}` : ''}`;
    }
  }
  return objs;
}

const hasKubectl = spawnSync('which', ['kubectl']).status === 0;
function render(dir: string): Obj[] {
  if (!hasKubectl) return resolve(dir);
  return parseAllDocuments(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' })).map((d) => d.toJS() as Obj);
}

const base = render(path.join(k8s, 'base'));
const production = render(path.join(k8s, 'overlays', 'production'));
const find = (objs: Obj[], kind: string, name: string) => objs.find((o) => o.kind === kind && o.metadata.name === name);
const container = (objs: Obj[], name: string) => find(objs, 'Deployment', name)!.spec.template.spec.containers[0];

/** The port each service listens on in docker-compose.yml: both deployments must agree. */
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, { environment: Record<string, string> }>;
};
const portOf = (name: string) =>
  Number(name === 'gateway' ? compose.services.gateway.environment.PORT : compose.services[name].environment.GRPC_PORT);

/**
 * A container's `env` as Kubernetes gives it: a `valueFrom` (the downward API's pod IP) stands in as 10.0.0.7, and a
 * `$(NAME)` in a value is replaced by an earlier entry's value.
 */
function containerEnv(c: { env?: Array<{ name: string; value?: string }> }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of c.env ?? [])
    out[e.name] = e.value === undefined ? '10.0.0.7' : e.value.replace(/\$\(([A-Z0-9_]+)\)/g, (ref, n: string) => out[n] ?? ref);
  return out;
}

/** The env templates of the Secrets: every key in them is a secret and must never appear as a literal. */
const secretTemplate = (file: string) =>
  Object.fromEntries(
    readFileSync(path.join(k8s, 'secrets', file), 'utf8')
      .split('\n')
      .map((l) => /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1], m[2]]),
  ) as Record<string, string>;
const SECRET_KEYS = new Set(readdirSync(path.join(k8s, 'secrets')).flatMap((f) => Object.keys(secretTemplate(f))));

test('our resolver and kubectl kustomize (when installed) render the same objects', () => {
  const ids = (objs: Obj[]) => objs.map((o) => `${o.kind}/${o.metadata.name}`).sort();
  expect(ids(resolve(path.join(k8s, 'base')))).toEqual(ids(base));
  expect(ids(resolve(path.join(k8s, 'overlays', 'production')))).toEqual(ids(production));
});

describe.each(SERVICES)('%s', (name) => {
  const port = portOf(name);

  test('has a Deployment, a Service and a PodDisruptionBudget selecting the same pods', () => {
    const deployment = find(base, 'Deployment', name);
    const service = find(base, 'Service', name);
    const pdb = find(base, 'PodDisruptionBudget', name);
    expect({ deployment: !!deployment, service: !!service, pdb: !!pdb }).toEqual({ deployment: true, service: true, pdb: true });
    const labels = deployment!.spec.template.metadata.labels;
    expect(labels).toMatchObject(deployment!.spec.selector.matchLabels);
    expect(labels).toMatchObject(service!.spec.selector);
    expect(labels).toMatchObject(pdb!.spec.selector.matchLabels);
    expect(pdb!.spec.maxUnavailable).toBe(1);
  });

  test("runs the image compose builds, on compose's port, with resources", () => {
    const c = container(base, name);
    expect(c.image).toBe(`messaging-crm/${name}`);
    expect(c.ports[0].containerPort).toBe(port);
    expect(c.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c.resources.limits.memory).toEqual(expect.any(String));
    const service = find(base, 'Service', name)!;
    expect(service.spec.ports[0].targetPort).toBe(c.ports[0].name);
  });

  test('is probed on its real health check', () => {
    const c = container(base, name);
    if (name === 'gateway') {
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    } else {
      // Readiness asks the default health name (the service's dependencies included); startup and liveness ask
      // `liveness` (the process alone), so an outage of PostgreSQL, RabbitMQ or Redis never restarts the pods. The
      // image's probe script asks over mutual TLS with the pod's certificate (kubelet's grpc probe cannot present one).
      const probe = ['node', '/app/packages/grpc-kit/dist/health-probe.js'];
      expect(c.readinessProbe.exec).toEqual({ command: probe });
      for (const p of ['startupProbe', 'livenessProbe'])
        expect({ p, exec: c[p]?.exec }).toEqual({ p, exec: { command: [...probe, LIVENESS_SERVICE] } });
      for (const p of ['startupProbe', 'readinessProbe', 'livenessProbe'])
        expect({ p, timeout: c[p].timeoutSeconds >= 3 }).toEqual({ p, timeout: true });
    }
  });

  test('reads settings from the shared ConfigMap and secrets from Secrets only, never as literals', () => {
    const c = container(base, name);
    expect(c.envFrom).toEqual([
      { configMapRef: { name: 'messaging-crm-config' } },
      { secretRef: { name: 'messaging-crm-shared' } },
      { secretRef: { name: `${name}-secrets` } },
    ]);
    const literal = (c.env ?? []).filter((e: { name: string; value?: string }) => e.value !== undefined && SECRET_KEYS.has(e.name));
    expect(literal).toEqual([]);
    expect(Object.keys(secretTemplate(`${name}.env.example`)).length).toBeGreaterThan(0);
  });

  test('starts under NODE_ENV=production with the ConfigMap, its env and its Secrets filled in', () => {
    const c = container(base, name);
    const env: Record<string, string | undefined> = { ...find(base, 'ConfigMap', 'messaging-crm-config')!.data };
    Object.assign(env, containerEnv(c));
    for (const key of [...Object.keys(secretTemplate('shared.env.example')), ...Object.keys(secretTemplate(`${name}.env.example`))])
      env[key] = secretValue(key);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { loadConfig } = require(`@crm/${name}`) as { loadConfig: (e: Record<string, string | undefined>) => { NODE_ENV: string } };
    expect(loadConfig(env).NODE_ENV).toBe('production');
  });
});

/** The key material `npm run keys` prints, by .env name (read once, by the TLS test below). */
let keys: Record<string, string> | undefined;
function generatedKeys(): Record<string, string> {
  if (keys) return keys;
  const text = execFileSync(process.execPath, [path.join(root, 'scripts', 'generate-keys.mjs')], { encoding: 'utf8' });
  return (keys = Object.fromEntries(
    text
      .split('\n')
      .map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1], m[2]]),
  ));
}

describe.each(SERVICES)('%s with the Secrets filled from npm run keys', (name) => {
  test('runs with mutual TLS: the CA from the shared Secret, its own certificate named for its Service', () => {
    const k = generatedKeys();
    const prefix = name.replace(/-/g, '_').toUpperCase();
    const shared = secretTemplate('shared.env.example');
    const own = secretTemplate(`${name}.env.example`);
    expect(Object.keys(shared)).toContain('GRPC_TLS_CA');
    expect(Object.keys(own)).toEqual(expect.arrayContaining(['GRPC_TLS_CERT', 'GRPC_TLS_KEY']));
    const c = container(base, name);
    const env: Record<string, string | undefined> = { ...find(base, 'ConfigMap', 'messaging-crm-config')!.data };
    Object.assign(env, containerEnv(c));
    Object.assign(env, { GRPC_TLS_CA: k.GRPC_TLS_CA, GRPC_TLS_CERT: k[`${prefix}_GRPC_TLS_CERT`], GRPC_TLS_KEY: k[`${prefix}_GRPC_TLS_KEY`] });
    const transport = grpcTransportFromEnv(env);
    expect(transport.secure).toBe(true);
    expect(new X509Certificate(Buffer.from(env.GRPC_TLS_CERT!, 'base64')).subjectAltName?.split(', ')).toContain(
      `DNS:${find(base, 'Service', name)!.metadata.name}`,
    );
    // messaging's attachments port is HTTPS under TLS: its callers name it so.
    if (env.MESSAGING_HTTP_URL) expect(transport.httpAgent(new URL(env.MESSAGING_HTTP_URL), 'MESSAGING_HTTP_URL')).toBeDefined();
  }, 60_000);
});

/** A value an operator could put in the Secret for `key`. */
function secretValue(key: string): string {
  if (key === 'ENCRYPTION_KEY') return randomBytes(32).toString('base64');
  if (key === 'DATABASE_URL') return `postgres://svc:${randomBytes(12).toString('hex')}@pgbouncer:5432/crm_svc`;
  if (key === 'DATABASE_DIRECT_URL') return `postgres://svc:${randomBytes(12).toString('hex')}@db.internal:5432/crm_svc`;
  if (key === 'REDIS_URL') return `redis://svc:${randomBytes(12).toString('hex')}@redis.internal:6379`;
  if (key === 'AMQP_URL') return `amqp://svc:${randomBytes(12).toString('hex')}@mq.internal:5672`;
  if (key === 'SMTP_URL') return '';
  return randomBytes(32).toString('hex');
}

test('no Secret object and no secret value is committed: the templates are empty, the ConfigMap holds none', () => {
  for (const objs of [base, production]) expect(objs.filter((o) => o.kind === 'Secret')).toEqual([]);
  for (const file of readdirSync(path.join(k8s, 'secrets'))) {
    expect(file).toMatch(/\.env\.example$/);
    for (const [key, value] of Object.entries(secretTemplate(file))) expect({ file, key, value }).toEqual({ file, key, value: '' });
  }
  const data = find(base, 'ConfigMap', 'messaging-crm-config')!.data!;
  expect(Object.keys(data).filter((k) => SECRET_KEYS.has(k) || /PASSWORD|SECRET|PRIVATE/.test(k))).toEqual([]);
});

test('the gateway and chatnet-connector are autoscaled (their Deployments leave the count to the HPA); the others are not', () => {
  for (const name of SERVICES) {
    const hpa = find(base, 'HorizontalPodAutoscaler', name);
    if (AUTOSCALED.includes(name)) {
      expect(hpa!.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa!.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(find(base, 'Deployment', name)!.spec.replicas).toBeUndefined();
    } else {
      expect({ name, hpa }).toEqual({ name, hpa: undefined });
    }
  }
});

test('each gateway pod tells its peers its own IP, on the port the gateway NetworkPolicy opens to anyone', () => {
  const c = container(base, 'gateway');
  expect(c.env.find((e: { name: string }) => e.name === 'POD_IP')).toEqual({
    name: 'POD_IP',
    valueFrom: { fieldRef: { fieldPath: 'status.podIP' } },
  });
  expect(containerEnv(c).GATEWAY_PEER_HOST).toBe('10.0.0.7');
  // The session's pod is reached on the gateway's own port, which its NetworkPolicy opens to every source.
  const policy = find(base, 'NetworkPolicy', 'gateway-from-anywhere')!;
  expect(policy.spec.ingress).toEqual([{ ports: [{ port: Number(containerEnv(c).PORT), protocol: 'TCP' }] }]);
});

test('chatnet-connector is a headless Service, so gRPC clients see and round-robin over every pod', () => {
  expect(find(base, 'Service', 'chatnet-connector')!.spec.clusterIP).toBe('None');
});

describe('NetworkPolicies', () => {
  const policies = base.filter((o) => o.kind === 'NetworkPolicy');
  const forPods = (name: string) => policies.filter((p) => p.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] === name);
  /** Package of a gRPC method → the service folder that serves it; principal → service folder. */
  const serviceOf = (pkgOrPrincipal: string) => (pkgOrPrincipal === 'connector' ? 'chatnet-connector' : pkgOrPrincipal);
  // `<pkg>.v1.Http/…` operations are served on a service's HTTP port (messaging's attachment streams), the rest over gRPC.
  const isHttp = (m: string) => m.split('/')[0].endsWith('.Http');
  const callersOf = (target: string, http = false) =>
    Object.entries(SERVICE_CALL_POLICY)
      .filter(([, methods]) => methods.some((m) => serviceOf(m.split('.')[0]) === target && isHttp(m) === http))
      .map(([caller]) => serviceOf(caller));

  test('deny all ingress by default', () => {
    const deny = policies.find((p) => p.metadata.name === 'default-deny-ingress');
    expect(deny?.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress'] });
  });

  test('only the gateway is reachable from anywhere, and only on its HTTP port', () => {
    const open = policies.filter((p) => (p.spec.ingress ?? []).some((rule: { from?: unknown }) => !rule.from));
    expect(open.map((p) => p.spec.podSelector.matchLabels)).toEqual([{ 'app.kubernetes.io/name': 'gateway' }]);
    expect(open[0].spec.ingress).toEqual([{ ports: [{ port: portOf('gateway'), protocol: 'TCP' }] }]);
  });

  test.each(APP)('%s accepts its gRPC port only from the gateway and the services SERVICE_CALL_POLICY lets call it', (name) => {
    const [policy] = forPods(name);
    expect(forPods(name)).toHaveLength(1);
    const grpcRule = policy.spec.ingress.find((r: any) => r.ports.some((p: { port: number }) => p.port === portOf(name)));
    const [selector] = grpcRule.from;
    const [expr] = selector.podSelector.matchExpressions;
    expect({ key: expr.key, operator: expr.operator }).toEqual({ key: 'app.kubernetes.io/name', operator: 'In' });
    expect([...expr.values].sort()).toEqual(['gateway', ...callersOf(name)].sort());
    // Any other port (messaging's attachment streams) is for the gateway and the services allowed its HTTP operations.
    for (const rule of policy.spec.ingress.filter((r: unknown) => r !== grpcRule)) {
      const callers = callersOf(name, true);
      if (callers.length === 0) expect(rule.from).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } } }]);
      else expect([...rule.from[0].podSelector.matchExpressions[0].values].sort()).toEqual(['gateway', ...callers].sort());
    }
  });
});

describe('PgBouncer', () => {
  const deployment = find(base, 'Deployment', 'pgbouncer')!;
  const pod = deployment.spec.template.spec;
  const service = find(base, 'Service', 'pgbouncer')!;
  /** The comment line above `key` in a Secret template. */
  const commentAbove = (file: string, key: string) => {
    const lines = readFileSync(path.join(k8s, 'secrets', file), 'utf8').split('\n');
    return lines[lines.indexOf(`${key}=`) - 1];
  };

  test("runs deploy/pgbouncer's settings and start script, the image compose runs, behind a Service on 5432", () => {
    const data = find(base, 'ConfigMap', 'pgbouncer')!.data!;
    for (const file of ['pgbouncer.ini', 'start.sh'])
      expect({ file, same: data[file] === readFileSync(path.join(root, 'deploy', 'pgbouncer', file), 'utf8') }).toEqual({ file, same: true });
    const c = pod.containers[0];
    expect(c.image).toBe(parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')).services.pgbouncer.image);
    expect(c.command).toEqual(['/bin/sh', '/deploy/pgbouncer/start.sh']);
    expect(pod.volumes.find((v: { name: string }) => v.name === 'config').configMap.name).toBe('pgbouncer');
    expect(c.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'config', mountPath: '/deploy/pgbouncer', readOnly: true },
        { name: 'tmp', mountPath: '/tmp' },
      ]),
    );
    expect(c.env.map((e: { name: string }) => e.name)).toEqual(expect.arrayContaining(['POSTGRES_HOST', 'POSTGRES_PORT']));
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(service.spec.ports).toEqual([{ name: 'postgres', port: 5432, targetPort: c.ports[0].name }]);
    expect(c.ports[0].containerPort).toBe(5432);
  });

  test("knows every service role's password from its own Secret, never a literal", () => {
    expect(pod.containers[0].envFrom).toEqual([{ secretRef: { name: 'pgbouncer-secrets' } }]);
    expect(Object.keys(secretTemplate('pgbouncer.env.example')).sort()).toEqual(
      APP.map((n) => `${n.replace(/-/g, '_').toUpperCase()}_DB_PASSWORD`).sort(),
    );
  });

  test.each(APP)("%s's pool goes through the PgBouncer Service; what holds a session has DATABASE_DIRECT_URL", (name) => {
    const file = `${name}.env.example`;
    expect(Object.keys(secretTemplate(file))).toEqual(expect.arrayContaining(['DATABASE_URL', 'DATABASE_DIRECT_URL']));
    expect(commentAbove(file, 'DATABASE_URL')).toContain(`@${service.metadata.name}:${service.spec.ports[0].port}/`);
    expect(commentAbove(file, 'DATABASE_DIRECT_URL')).toMatch(/^# postgres:\/\/<role>:<password>@<host>:5432\/crm_<role>: .*directly/);
  });

  test('accepts connections only from the services with a database', () => {
    const [policy] = base.filter((o) => o.kind === 'NetworkPolicy' && o.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] === 'pgbouncer');
    const [rule] = policy.spec.ingress;
    expect(rule.ports).toEqual([{ port: 5432, protocol: 'TCP' }]);
    expect([...rule.from[0].podSelector.matchExpressions[0].values].sort()).toEqual([...APP].sort());
  });
});

describe('production overlay', () => {
  test('everything lives in one namespace', () => {
    const namespaced = production.filter((o) => o.kind !== 'Namespace');
    expect(new Set(namespaced.map((o) => o.metadata.namespace))).toEqual(new Set(['messaging-crm']));
  });

  test('every image is pinned to a tag from a registry', () => {
    for (const name of SERVICES) expect(container(production, name).image).toMatch(new RegExp(`^[a-z0-9.-]+/messaging-crm/${name}:[0-9][\\w.-]*$`));
  });

  test('every service runs at least two pods (fixed count or autoscaler minimum)', () => {
    for (const name of SERVICES) {
      const count = find(production, 'HorizontalPodAutoscaler', name)?.spec.minReplicas ?? find(production, 'Deployment', name)!.spec.replicas;
      expect({ name, atLeastTwo: count >= 2 }).toEqual({ name, atLeastTwo: true });
    }
  });
});
