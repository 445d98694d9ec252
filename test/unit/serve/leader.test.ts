import assert from 'node:assert/strict';
import net from 'node:net';
import { LeaderElector, microTime, type LeaderOptions } from '../../../src/serve/leader.js';
import { BpaError } from '../../../src/util/errors.js';
import { startFakeKube, type FakeKube } from '../../fakes/kube-api-server.js';
import { kubeConfigFor } from '../../fakes/kubeconfig.js';

const NS = 'bpa-system';
const LEASE = 'bpa-leader';
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
// Short periods keep the suite fast; the ratios are those of the defaults (15/10/2).
const TIMING = { leaseDurationSeconds: 1, renewDeadlineSeconds: 0.6, retryPeriodSeconds: 0.1 };

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/**
 * A TCP link to the API server that the test can cut: while down, bytes are dropped both
 * ways and requests hang, as in a network partition (not a clean connection refusal).
 */
class Link {
  private down = false;
  /** Chunks the API server sent back through the link: each is a sign of a request made. */
  responses = 0;
  private readonly sockets = new Set<net.Socket>();
  private constructor(
    private readonly server: net.Server,
    readonly url: string,
  ) {}

  static async to(target: string): Promise<Link> {
    const { port } = new URL(target);
    const made: { link?: Link } = {};
    const server = net.createServer((client) => made.link?.accept(client, Number(port)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address() as net.AddressInfo;
    made.link = new Link(server, `http://127.0.0.1:${addr.port}`);
    return made.link;
  }

  private accept(client: net.Socket, port: number): void {
    const upstream = net.connect(port, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    client.on('data', (d: Buffer) => void (this.down || upstream.write(d)));
    upstream.on('data', (d: Buffer) => {
      if (this.down) return;
      this.responses++;
      client.write(d);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on('close', end);
      s.on('error', end);
    }
  }

  cut(): void {
    this.down = true;
  }

  heal(): void {
    this.down = false;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The wall clock a replica judges lease expiry by, moved by the test: frozen, no lease ever
 * expires in that replica's eyes, so what it does can only come from what it read; advanced,
 * it expires at that moment; running, it follows real time from where it stands.
 */
class ManualClock {
  private at = Date.parse('2026-11-24T00:00:00Z');
  private since: number | undefined;
  readonly now = (): number => this.at + (this.since === undefined ? 0 : Date.now() - this.since);
  advance(ms: number): void {
    this.at += ms;
  }
  run(): void {
    this.since = Date.now();
  }
}

interface Replica {
  id: string;
  elector: LeaderElector;
  events: Array<{ what: 'started' | 'stopped'; at: number }>;
  done: Promise<void>;
}

async function waitUntil(cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

// A single leader's Lease (MicroTime, renewals, release) and a held Lease taken over only after
// it expires run on a real kube-apiserver in test/integration/kube/leader-real.test.ts. Here,
// on the fake: what needs slowed or injected answers (both replicas creating the Lease at
// once, a partitioned leader, a 409 on renewal) and checks of the requests themselves.
describe('leader election on a Lease (against the fake API server)', () => {
  let kube: FakeKube;
  let replicas: Replica[];
  let links: Link[];
  let sampler: NodeJS.Timeout | undefined;
  let violations: string[];

  beforeEach(async () => {
    kube = await startFakeKube();
    replicas = [];
    links = [];
    violations = [];
  });

  afterEach(async () => {
    if (sampler) clearInterval(sampler);
    sampler = undefined;
    await Promise.all(replicas.map((r) => r.elector.stop()));
    await Promise.all(replicas.map((r) => r.done));
    await Promise.all(links.map((l) => l.close()));
    await kube.stop();
  });

  const leaseRequests = (method: string): number =>
    kube.requests.filter((r) => r.method === method && r.path === `${LEASES}/${LEASE}`).length;
  /** Renewals that `id` sent while it held the lease. */
  const renewalsBy = (id: string): number =>
    kube.requests.filter(
      (r) =>
        r.method === 'PUT' &&
        r.path === `${LEASES}/${LEASE}` &&
        (r.body as { spec?: LeaseSpec }).spec?.holderIdentity === id,
    ).length;

  const lease = (): LeaseSpec | undefined =>
    kube.get('coordination.k8s.io/v1', 'Lease', NS, LEASE)?.spec as LeaseSpec | undefined;

  function start(id: string, server = kube.url, extra: Partial<LeaderOptions> = {}): Replica {
    const kc = kubeConfigFor({ server, token: kube.token, namespace: NS });
    const elector = new LeaderElector(kc, {
      namespace: NS,
      name: LEASE,
      identity: id,
      ...TIMING,
      ...extra,
    });
    const events: Replica['events'] = [];
    const done = elector.run({
      onStartedLeading: () => events.push({ what: 'started', at: performance.now() }),
      onStoppedLeading: () => events.push({ what: 'stopped', at: performance.now() }),
    });
    const replica = { id, elector, events, done };
    replicas.push(replica);
    return replica;
  }

  /** Checks, every few milliseconds, that whoever believes it leads is the lease's holder. */
  function watchInvariant(): void {
    sampler = setInterval(() => {
      const leaders = replicas.filter((r) => r.elector.isLeader());
      if (leaders.length > 1)
        violations.push(`two leaders: ${leaders.map((r) => r.id).join(', ')}`);
      for (const r of leaders) {
        const holder = lease()?.holderIdentity;
        if (holder !== r.id) violations.push(`${r.id} leads but the lease names ${String(holder)}`);
      }
    }, 3);
  }

  it('formats lease times as RFC 3339 with microseconds', () => {
    assert.equal(
      JSON.stringify(microTime(Date.parse('2026-11-22T00:00:00Z'))),
      '"2026-11-22T00:00:00.000000Z"',
    );
  });

  it('refuses timings that could let two replicas lead', () => {
    const kc = kube.kubeConfig(NS);
    const base = { namespace: NS, name: LEASE, identity: 'x' };
    assert.throws(
      () =>
        new LeaderElector(kc, {
          ...base,
          leaseDurationSeconds: 10,
          renewDeadlineSeconds: 10,
          retryPeriodSeconds: 2,
        }),
      (err: unknown) => err instanceof BpaError && err.code === 'LEADER_CONFIG',
    );
    assert.throws(
      () =>
        new LeaderElector(kc, {
          ...base,
          leaseDurationSeconds: 15,
          renewDeadlineSeconds: 2,
          retryPeriodSeconds: 2,
        }),
      /renewDeadline/,
    );
  });

  it('lets exactly one of two replicas lead, even when both create the Lease at once', async () => {
    // Slow answers make both candidates read "no Lease" and both POST; the second gets 409.
    kube.setLatency(40);
    watchInvariant();
    const a = start('bpa-a');
    const b = start('bpa-b');
    await waitUntil(() => a.elector.isLeader() || b.elector.isLeader());
    kube.setLatency(0);
    const creates = kube.requests.filter((r) => r.method === 'POST' && r.path === LEASES);
    assert.equal(creates.length, 2, 'both candidates tried to create the Lease');
    // Several renewals later, the other one still follows.
    const first = a.elector.isLeader() ? a : b;
    const renewed = renewalsBy(first.id);
    await waitUntil(() => renewalsBy(first.id) >= renewed + 3);
    const leaders = [a, b].filter((r) => r.elector.isLeader());
    assert.equal(leaders.length, 1);
    const follower = leaders[0] === a ? b : a;
    assert.deepEqual(follower.events, [], 'the loser never started leading');
    assert.equal(lease()?.holderIdentity, leaders[0]?.id);
    assert.equal(lease()?.leaseTransitions, 0);
    assert.deepEqual(violations, []);
  });

  it('steps a partitioned leader down before the other replica takes over after expiry', async () => {
    const link = await Link.to(kube.url);
    links.push(link);
    const a = start('bpa-a', link.url);
    await waitUntil(() => a.elector.isLeader());
    // bpa-b's clock stands still: in its eyes the lease cannot expire until the test says so.
    const clock = new ManualClock();
    const gets = leaseRequests('GET');
    const puts = leaseRequests('PUT');
    const b = start('bpa-b', kube.url, { now: clock.now });
    watchInvariant();
    // bpa-b has read the lease a few times (reads beyond bpa-a's, which come with its renewals).
    await waitUntil(() => leaseRequests('GET') - gets >= leaseRequests('PUT') - puts + 3);
    assert.equal(b.elector.isLeader(), false);

    link.cut();
    // bpa-a fails to renew for renewDeadline and steps down, while nobody can yet consider
    // the lease expired: the old leader stops before any other replica may start.
    await waitUntil(() => a.events.some((e) => e.what === 'stopped'));
    assert.equal(a.elector.isLeader(), false);
    assert.equal(b.elector.isLeader(), false);
    assert.equal(lease()?.holderIdentity, 'bpa-a');

    // The lease expires in bpa-b's eyes: it takes over.
    clock.advance(TIMING.leaseDurationSeconds * 1000 + 1);
    clock.run();
    await waitUntil(() => b.elector.isLeader());
    const stepDown = a.events.find((e) => e.what === 'stopped');
    const takeover = b.events.find((e) => e.what === 'started');
    assert.ok(stepDown && takeover);
    assert.ok(stepDown.at < takeover.at, 'the old leader stopped before the new one started');
    const spec = lease();
    assert.equal(spec?.holderIdentity, 'bpa-b');
    assert.equal(spec?.leaseTransitions, 1);

    // Back on the network, the old leader finds the lease held and stays a follower.
    link.heal();
    const seen = link.responses;
    await waitUntil(() => link.responses >= seen + 3);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(lease()?.holderIdentity, 'bpa-b');
    assert.deepEqual(violations, []);
  });

  it('treats a 409 on renewal as a failed attempt, not a lost lease, and goes on renewing', async () => {
    const a = start('bpa-a');
    await waitUntil(() => a.elector.isLeader());
    const putsBefore = kube.requests.filter((r) => r.method === 'PUT').length;
    kube.fail(
      { method: 'PUT', pathPrefix: `${LEASES}/${LEASE}`, times: 1 },
      {
        code: 409,
        message: 'Operation cannot be fulfilled on leases.coordination.k8s.io "bpa-leader"',
      },
    );
    await waitUntil(() => kube.requests.filter((r) => r.method === 'PUT').length >= putsBefore + 3);
    assert.equal(a.elector.isLeader(), true);
    assert.deepEqual(
      a.events.map((e) => e.what),
      ['started'],
    );
  });
});
