import assert from 'node:assert/strict';
import http from 'node:http';
import { Writable } from 'node:stream';
import { GuessLimiter } from '../../../src/serve/guess-limit.js';
import { startHttpServer, type HttpServer } from '../../../src/serve/http.js';
import { BpaMetrics } from '../../../src/serve/metrics.js';
import { Scheduler } from '../../../src/serve/scheduler.js';
import {
  isLoopback,
  loginRoutes,
  uiAccess,
  uiGuard,
  type UiAccess,
} from '../../../src/serve/ui/access.js';
import { LiveBus } from '../../../src/serve/ui/live.js';
import { UiModel } from '../../../src/serve/ui/model.js';
import { statusPageRoutes } from '../../../src/serve/ui/routes.js';
import { createLogger } from '../../../src/util/log.js';
import { readLogTail } from '../../../src/state/logs.js';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeTimers, ManualReconcile } from './fake-timers.js';

const TOKEN = 'ui-token-0f4c1e9a7b2d';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function call(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, agent: false },
      (res) => {
        if (res.headers['content-type'] === 'text/event-stream; charset=utf-8') {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end(opts.body);
  });
}

describe('serve/ui: access to the status page', () => {
  it('is open on loopback only, off elsewhere without a token, and a token always wins', () => {
    for (const h of ['127.0.0.1', '127.9.9.9', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1'])
      assert.equal(isLoopback(h), true, h);
    for (const h of ['0.0.0.0', '', '::', '10.0.0.1', '::ffff:10.0.0.1', 'bpa.example'])
      assert.equal(isLoopback(h), false, h);
    assert.deepEqual(uiAccess({ listenHost: '127.0.0.1' }), { mode: 'open', why: 'loopback' });
    assert.equal(uiAccess({ listenHost: '0.0.0.0' }).mode, 'off');
    assert.match(
      (uiAccess({ listenHost: '0.0.0.0' }) as { reason: string }).reason,
      /--ui-token-file/,
    );
    assert.deepEqual(uiAccess({ listenHost: '0.0.0.0', insecureNoToken: true }), {
      mode: 'open',
      why: 'insecure',
    });
    assert.deepEqual(uiAccess({ listenHost: '127.0.0.1', token: TOKEN }), {
      mode: 'token',
      token: TOKEN,
    });
  });

  describe('over HTTP', () => {
    let server: HttpServer | undefined;
    let scheduler: Scheduler;
    let model: UiModel;
    let clock = Date.parse('2026-03-01T12:00:00Z');

    async function start(access: UiAccess, stateDir?: string): Promise<string> {
      const limiter = new GuessLimiter();
      scheduler = new Scheduler({
        reconcile: new ManualReconcile().fn,
        intervalMs: 300_000,
        timers: new FakeTimers(),
      });
      const bus = new LiveBus();
      model = new UiModel({ scheduler, bus, pollMs: 60_000 });
      server = await startHttpServer({
        listen: { host: '127.0.0.1', port: 0 },
        scheduler,
        metrics: new BpaMetrics({ defaultMetrics: false }),
        log: createLogger('silent', new Writable({ write: (_c, _e, done) => done() })),
        routes: statusPageRoutes({
          model,
          bus,
          guard: uiGuard(access, limiter, () => clock),
          extra: loginRoutes(access, limiter, () => clock),
          loggedIn: access.mode === 'token',
          ...(stateDir ? { logs: (id: string) => readLogTail(stateDir, id) } : {}),
        }),
      });
      return server.url;
    }
    afterEach(async () => {
      await scheduler?.stop();
      await server?.close();
      server = undefined;
    });

    it('with a token: pages redirect to the login form, the stream answers 401, a bearer token or the session cookie gets in', async () => {
      const url = await start({ mode: 'token', token: TOKEN });
      const page = await call(`${url}/inventory?show=free`);
      assert.equal(page.status, 303);
      assert.equal(page.headers.location, '/ui/login?next=%2Finventory%3Fshow%3Dfree');
      assert.doesNotMatch(page.body, /Inventory/);
      const stream = await call(`${url}/ui/events`);
      assert.equal(stream.status, 401);
      assert.equal(stream.headers['www-authenticate'], 'Bearer realm="bpa"');
      assert.equal(
        (await call(`${url}/`, { headers: { authorization: 'Bearer nope' } })).status,
        303,
      );
      assert.equal(
        (await call(`${url}/`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
        200,
      );
      assert.equal(
        (await call(`${url}/ui/events`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
        200,
      );
      // The stylesheet is no secret: the login form needs it.
      assert.equal((await call(`${url}/ui/app.css`)).status, 200);

      const form = await call(`${url}/ui/login?next=/history`);
      assert.match(form.body, /<input type="hidden" name="next" value="\/history"/);
      const post = (token: string, next: string): Promise<Reply> =>
        call(`${url}/ui/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token, next }).toString(),
        });
      const wrong = await post('not-it', '/history');
      assert.equal(wrong.status, 401);
      assert.match(wrong.body, /That is not the token/);
      assert.equal(wrong.headers['set-cookie'], undefined);
      const right = await post(TOKEN, '/history');
      assert.equal(right.status, 303);
      assert.equal(right.headers.location, '/history');
      const cookie = right.headers['set-cookie']?.[0] ?? '';
      assert.match(
        cookie,
        /^bpa_ui=\d+\.[0-9a-f]{64}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/,
      );
      assert.ok(!cookie.includes(TOKEN), 'the cookie is derived from the token, not the token');
      const session = cookie.split(';')[0] ?? '';
      const inside = await call(`${url}/history`, { headers: { cookie: session } });
      assert.equal(inside.status, 200);
      assert.match(inside.body, /action="\/ui\/logout"/);
      assert.equal((await call(`${url}/ui/events`, { headers: { cookie: session } })).status, 200);
      assert.equal(
        (await call(`${url}/`, { headers: { cookie: 'bpa_ui=' + '0'.repeat(64) } })).status,
        303,
      );
      // Never back to another site after the login.
      for (const next of [
        '//evil.example/',
        '/\\evil.example',
        'https://evil.example/',
        '/\u4e2d',
        '/a\u0000b',
      ])
        assert.equal((await post(TOKEN, next)).headers.location, '/', next);
      const out = await call(`${url}/ui/logout`, { method: 'POST', headers: { cookie: session } });
      assert.match(out.headers['set-cookie']?.[0] ?? '', /^bpa_ui=; .*Max-Age=0/);
    });

    it('after 5 wrong tokens in a minute an address gets 429 with a growing Retry-After, form and bearer alike', async () => {
      const url = await start({ mode: 'token', token: TOKEN });
      const post = (token: string): Promise<Reply> =>
        call(`${url}/ui/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token, next: '/' }).toString(),
        });
      for (let i = 0; i < 4; i++) assert.equal((await post(`guess-${i}`)).status, 401);
      const fifth = await post('guess-4');
      assert.equal(fifth.status, 429);
      assert.equal(fifth.headers['retry-after'], '60');
      assert.match(fifth.body, /Too many wrong tokens from this address: try again in 60 s/);
      // While blocked even the right token is refused: a guess is not even compared.
      const right = await post(TOKEN);
      assert.equal(right.status, 429);
      assert.equal(right.headers['set-cookie'], undefined);
      const bearer = await call(`${url}/ui/events`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(bearer.status, 429);
      assert.equal(bearer.headers['retry-after'], '60');
      clock += 30_000;
      assert.equal((await post(TOKEN)).headers['retry-after'], '30');

      clock += 31_000;
      // Bearer guesses count as well; the next round waits twice as long.
      for (let i = 0; i < 4; i++)
        assert.equal(
          (await call(`${url}/ui/events`, { headers: { authorization: `Bearer nope-${i}` } }))
            .status,
          401,
        );
      const again = await call(`${url}/ui/events`, { headers: { authorization: 'Bearer nope' } });
      assert.equal(again.status, 429);
      assert.equal(again.headers['retry-after'], '120');

      clock += 121_000;
      const ok = await post(TOKEN);
      assert.equal(ok.status, 303, 'after the delay the right token gets in');
      for (let i = 0; i < 4; i++)
        assert.equal((await post(`guess-${i}`)).status, 401, 'a fresh count');
    });

    it('a session ends after 12 hours on the server too: a copied cookie does not outlive it', async () => {
      const url = await start({ mode: 'token', token: TOKEN });
      const right = await call(`${url}/ui/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: TOKEN, next: '/' }).toString(),
      });
      const session = (right.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? '';
      const [, value = ''] = session.split('=');
      const started = clock;
      try {
        clock = started + 11 * 3600_000;
        assert.equal((await call(`${url}/`, { headers: { cookie: session } })).status, 200);
        clock = started + 12 * 3600_000 + 1000;
        assert.equal((await call(`${url}/`, { headers: { cookie: session } })).status, 303);
        assert.equal(
          (await call(`${url}/ui/events`, { headers: { cookie: session } })).status,
          401,
        );
        // Moving the expiry forward breaks the MAC.
        const [, mac] = value.split('.');
        const later = `bpa_ui=${Math.floor(clock / 1000) + 3600}.${mac ?? ''}`;
        assert.equal((await call(`${url}/`, { headers: { cookie: later } })).status, 303);
      } finally {
        clock = started;
      }
    });

    it("GET /api/v1/logs/<id>: an installer log, redacted, behind the page's access; the id is never a path", async () => {
      const stateDir = await mkdtemp(join(tmpdir(), 'bpa-ui-logs-'));
      try {
        const logs = join(stateDir, 'clusters', 'east', 'logs');
        await mkdir(logs, { recursive: true });
        await writeFile(
          join(logs, 'provision-2026-03-01T12-00-00-000Z.log'),
          // A key block as an installer might print one (a made-up body), spelt in parts so the
          // file holds no key marker of its own.
          `TASK [login]\n${keyBlock('keybody0000000000')}\n+ docker login -u admin -p Hunter2 registry.example\nfatal: no\n`,
        );
        await writeFile(join(stateDir, 'secret.log'), 'outside the logs\n');
        await writeFile(join(stateDir, 'clusters', 'east', 'applied.log'), 'outside the logs\n');
        await symlink(join(stateDir, 'secret.log'), join(logs, 'linked.log'));
        const url = await start({ mode: 'token', token: TOKEN }, stateDir);
        const id = 'east/provision-2026-03-01T12-00-00-000Z.log';
        const anonymous = await call(`${url}/api/v1/logs/${id}`);
        assert.equal(anonymous.status, 401);
        assert.doesNotMatch(anonymous.body, /docker|fatal/);
        const bearer = { authorization: `Bearer ${TOKEN}` };
        const log = await call(`${url}/api/v1/logs/${id}`, { headers: bearer });
        assert.equal(log.status, 200);
        assert.equal(log.headers['content-type'], 'text/plain; charset=utf-8');
        assert.equal(log.headers['x-content-type-options'], 'nosniff');
        assert.match(log.body, /docker login -u admin -p \*\*\* registry\.example\nfatal: no/);
        assert.doesNotMatch(log.body, /Hunter2|keybody/);
        for (const path of [
          'east/..%2F..%2Fsecret.log',
          '..%2F..%2Fsecret.log',
          '%2e%2e/%2e%2e/secret.log',
          'east%2F..%2F..%2F..%2Fsecret.log',
          'east/linked.log',
          'east/..%2Fapplied.log',
          '..%2Fclusters%2Feast%2Fapplied.log',
          `${encodeURIComponent(stateDir)}%2Fsecret.log`,
          'east/missing.log',
        ]) {
          const r = await call(`${url}/api/v1/logs/${path}`, { headers: bearer });
          assert.equal(r.status, 404, path);
          assert.doesNotMatch(r.body, /outside the logs/, path);
        }
        await scheduler.stop();
        await server?.close();
        const off = await start(uiAccess({ listenHost: '0.0.0.0' }), stateDir);
        const refused = await call(`${off}/api/v1/logs/${id}`);
        assert.equal(refused.status, 403);
        assert.doesNotMatch(refused.body, /docker|fatal/);
      } finally {
        await rm(stateDir, { recursive: true, force: true });
      }
    });

    it('off: every page answers 403 saying how to turn it on; nothing of the site is shown', async () => {
      const access = uiAccess({ listenHost: '0.0.0.0' });
      const url = await start(access);
      const page = await call(`${url}/`);
      assert.equal(page.status, 403);
      assert.match(page.body, /The status page is off/);
      assert.match(page.body, /--ui-token-file/);
      assert.doesNotMatch(page.body, /Clusters/);
      assert.equal((await call(`${url}/ui/events`)).status, 403);
      assert.equal((await call(`${url}/ui/login`)).status, 404);
    });

    it('open on loopback: no login', async () => {
      const url = await start(uiAccess({ listenHost: '127.0.0.1' }));
      assert.equal((await call(`${url}/`)).status, 200);
      assert.equal((await call(`${url}/ui/login`)).status, 404);
    });

    it('open on loopback: a request for another host name (DNS rebinding) is refused, page and stream', async () => {
      const url = await start(uiAccess({ listenHost: '127.0.0.1' }));
      const port = new URL(url).port;
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost'])
        assert.equal((await call(`${url}/`, { headers: { host } })).status, 200, host);
      for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.nip.io:${port}`]) {
        const page = await call(`${url}/inventory`, { headers: { host } });
        assert.equal(page.status, 403, host);
        assert.match(page.body, /open only to loopback names/);
        assert.doesNotMatch(page.body, /Inventory|Clusters/);
        assert.equal((await call(`${url}/ui/events`, { headers: { host } })).status, 403, host);
      }
      // Behind an authenticating proxy (--ui-insecure-no-token) the proxy's name is the one used.
      await scheduler.stop();
      await server?.close();
      const proxied = await start(uiAccess({ listenHost: '0.0.0.0', insecureNoToken: true }));
      const host = 'bpa.site.example';
      assert.equal((await call(`${proxied}/`, { headers: { host } })).status, 200);
    });
  });
});

/** A PEM-style OpenSSH private key block around `body`, made at run time. */
function keyBlock(body: string): string {
  const label = ['OPENSSH', 'PRIVATE', 'KEY'].join(' ');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----`;
}
