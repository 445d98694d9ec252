import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, kill, spawnBpa, waitFor } from '../apply/harness.js';
import { requireLoopbackOnly } from '../../netns/loopback-only.js';
import { chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

const UI = 'ui-token-5d1f0b7c93e2a4';
const API = 'api-token-8a6e2c1d0f7b';
const UPLOAD = 'upload-token-3c9b7e1f2a4d';
const HOOK = 'webhook-secret-6e0a2d9c17b4';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One request on its own connection, from the loopback address `from` (127.0.0.0/8 is all
 * this machine's: 50 addresses are 50 clients to the server). An event stream is cut off at
 * its headers; no answer within `timeoutMs` is an error.
 */
function call(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    from?: string;
    timeoutMs?: number;
  } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: opts.method ?? 'GET',
        headers: opts.headers,
        agent: false,
        localAddress: opts.from ?? '127.0.0.1',
        signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
      },
      (res) => {
        if (
          opts.method !== 'HEAD' &&
          String(res.headers['content-type']).includes('event-stream')
        ) {
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
    req.on('error', (err) =>
      req.destroyed && err.name !== 'AbortError' ? undefined : reject(err),
    );
    req.end(opts.body);
  });
}

/**
 * The real `bpa serve` with every secret (page, suspend API, artifact API, webhook): a limit on
 * guessing each, per address and across addresses, the page's forms refuse other sites, and
 * HEAD on the event stream answers at once.
 */
describe('bpa serve: token checks, forms from other sites, HEAD on the stream', function () {
  this.timeout(90_000);
  requireLoopbackOnly();
  let tmp = '';
  let site = '';
  const children: ChildProcess[] = [];

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'bpa-tokens-'));
    site = join(tmp, 'site');
    await cp(join(ROOT, 'sites', 'example', 'inventory'), join(site, 'inventory'), {
      recursive: true,
    });
    await cp(join(ROOT, 'sites', 'example', 'site.yaml'), join(site, 'site.yaml'));
    await writeFile(join(tmp, 'ui'), `${UI}\n`, { mode: 0o600 });
    await writeFile(join(tmp, 'api'), `${API}\n`, { mode: 0o600 });
    await writeFile(join(tmp, 'upload'), `${UPLOAD}\n`, { mode: 0o600 });
    await writeFile(join(tmp, 'hook'), `${HOOK}\n`, { mode: 0o600 });
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) await kill(c);
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  /** A fresh bpa serve (a fresh limit) with every token; its base URL. */
  async function serve(state: string): Promise<{ base: string; stderr: () => string }> {
    let stderr = '';
    const child = spawnBpa([
      'serve',
      '--watch',
      site,
      '--state',
      join(tmp, state),
      '--interval',
      '1h',
      '--listen',
      '127.0.0.1:0',
      '--ui-token-file',
      join(tmp, 'ui'),
      '--api-token-file',
      join(tmp, 'api'),
      '--artifacts-token-file',
      join(tmp, 'upload'),
      '--webhook-secret-file',
      join(tmp, 'hook'),
    ]);
    children.push(child);
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const base = await waitFor(
      'the server URL',
      async () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr)?.[1],
      20_000,
    );
    return { base, stderr: () => stderr };
  }

  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
  const login = (base: string, headers: Record<string, string> = {}): Promise<Reply> =>
    call(`${base}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ token: UI, next: '/' }).toString(),
    });

  it('refuses a log-out or log-in sent from another site (403), takes one from its own page', async () => {
    const { base } = await serve('state-origin');
    const { host } = new URL(base);
    const session = (((await login(base)).headers['set-cookie'] ?? [])[0] ?? '').split(';')[0];
    assert.match(session ?? '', /^bpa_ui=\d+\./);
    for (const headers of <Record<string, string>[]>[
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: `http://${host}.evil.example` },
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      { 'sec-fetch-site': 'same-site' },
      // A browser's Sec-Fetch-Site wins over an Origin that looks right.
      { 'sec-fetch-site': 'cross-site', origin: base },
    ]) {
      const out = await call(`${base}/ui/logout`, {
        method: 'POST',
        headers: { cookie: session ?? '', ...headers },
      });
      assert.equal(out.status, 403, JSON.stringify(headers));
      assert.equal(out.headers['set-cookie'], undefined, 'the session is not cleared');
      assert.match(out.body, /Refused: sent from another site/);
      const cross = await login(base, headers);
      assert.equal(cross.status, 403, JSON.stringify(headers));
      assert.equal(cross.headers['set-cookie'], undefined);
    }
    // The session still works; its own page (or a client that is no browser) logs out.
    assert.equal((await call(`${base}/`, { headers: { cookie: session ?? '' } })).status, 200);
    for (const headers of <Record<string, string>[]>[
      { origin: base },
      { 'sec-fetch-site': 'same-origin', origin: base },
      { 'sec-fetch-site': 'none' },
      { origin: 'https://bpa.site.example', 'x-forwarded-host': 'bpa.site.example' },
      {},
    ]) {
      const out = await call(`${base}/ui/logout`, {
        method: 'POST',
        headers: { cookie: session ?? '', ...headers },
      });
      assert.equal(out.status, 303, JSON.stringify(headers));
      assert.match(out.headers['set-cookie']?.[0] ?? '', /^bpa_ui=; .*Max-Age=0/);
    }
    assert.equal((await login(base, { origin: base })).status, 303);
  });

  it("in a browser: a log-out form on another site is refused, the page's own Log out works", async function () {
    if (!existsSync(CHROMIUM)) this.skip();
    const { base } = await serve('state-browser');
    // Another origin on this machine (another port): what a page elsewhere would send.
    const evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<form id="f" method="post" action="${base}/ui/logout"></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--no-first-run', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`${base}/ui/login`);
      await page.fill('#token', UI);
      await Promise.all([page.waitForURL(`${base}/`), page.click('button[type=submit]')]);
      const { port } = evil.address() as { port: number };
      const refused = page.waitForResponse((r) => r.url() === `${base}/ui/logout`);
      await page.goto(`http://127.0.0.1:${port}/`);
      assert.equal((await refused).status(), 403);
      assert.match(await page.content(), /Refused: sent from another site/);
      const still = await page.goto(`${base}/`);
      assert.equal(still?.url(), `${base}/`, 'still logged in');
      await Promise.all([page.waitForURL(/\/ui\/login$/), page.click('form.logout button')]);
      await page.goto(`${base}/`);
      assert.match(page.url(), /\/ui\/login\?next=/, 'logged out by its own page');
    } finally {
      await browser.close();
      await new Promise((resolve) => evil.close(resolve));
    }
  });

  it('HEAD /ui/events answers at once with the headers of the stream', async () => {
    const { base } = await serve('state-head');
    const started = Date.now();
    const head = await call(`${base}/ui/events`, {
      method: 'HEAD',
      headers: bearer(UI),
      timeoutMs: 2_000,
    });
    assert.ok(Date.now() - started < 2_000);
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(head.body, '');
    const denied = await call(`${base}/ui/events`, { method: 'HEAD', timeoutMs: 2_000 });
    assert.equal(denied.status, 401, 'the token is still needed');
  });

  it("wrong tokens from one address count against that token's limit, on each of its routes", async () => {
    const { base } = await serve('state-one');
    const from = '127.0.0.7';
    const tries = [
      () => call(`${base}/api/v1/suspend`, { method: 'POST', headers: bearer('nope-1'), from }),
      () => call(`${base}/api/v1/resume`, { method: 'POST', headers: bearer('nope-2'), from }),
      () => call(`${base}/api/v1/suspend`, { headers: bearer('nope-3'), from }),
      () => call(`${base}/api/v1/suspend`, { headers: bearer('nope-4'), from }),
    ];
    for (const t of tries) assert.equal((await t()).status, 401);
    const fifth = await call(`${base}/api/v1/suspend`, { headers: bearer('nope-5'), from });
    assert.equal(fifth.status, 429);
    assert.equal(fifth.headers['retry-after'], '60');
    assert.match(fifth.body, /too many wrong tokens from this address: try again in 60 s/);
    // Blocked: the right API token is refused from that address, uncompared.
    const right = await call(`${base}/api/v1/suspend`, { headers: bearer(API), from });
    assert.equal(right.status, 429);
    assert.ok(Number(right.headers['retry-after']) > 0);
    // A guess at the API token is no guess at another: the page, artifact and webhook secrets
    // from that address are still checked.
    assert.equal(
      (await call(`${base}/api/v1/artifacts`, { headers: bearer(UPLOAD), from })).status,
      200,
    );
    assert.equal((await call(`${base}/`, { headers: bearer(UI), from })).status, 200);
    const hook = (token: string): Promise<Reply> =>
      call(`${base}/hooks/git`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gitlab-token': token },
        body: '{}',
        from,
      });
    assert.equal((await hook(HOOK)).status, 202);
    // Wrong GitLab tokens count on the webhook secret's own limit.
    for (let i = 1; i <= 4; i++) assert.equal((await hook(`guess-${i}`)).status, 401);
    assert.equal((await hook('guess-5')).status, 429);
    assert.equal((await hook(HOOK)).status, 429, 'the right secret waits too');
    // Another address is not blocked.
    assert.equal(
      (await call(`${base}/api/v1/suspend`, { headers: bearer(API), from: '127.0.0.8' })).status,
      200,
    );
  });

  it('200 wrong page tokens from 50 addresses: after 20, that token waits (429), but for a client that gave it; other tokens are checked', async () => {
    const { base, stderr } = await serve('state-many');
    // A client that logged in (from 127.0.0.1) before the guessing began.
    const session = (((await login(base)).headers['set-cookie'] ?? [])[0] ?? '').split(';')[0];
    const statuses: number[] = [];
    const retryAfter: string[] = [];
    for (let i = 0; i < 200; i++) {
      const reply = await call(`${base}/ui/events`, {
        headers: bearer(`guess-${i}`),
        from: `127.0.0.${(i % 50) + 2}`,
      });
      statuses.push(reply.status);
      if (reply.status === 429) retryAfter.push(String(reply.headers['retry-after']));
    }
    assert.deepEqual(statuses.slice(0, 19), Array<number>(19).fill(401));
    assert.deepEqual(statuses.slice(19), Array<number>(181).fill(429));
    assert.ok(
      retryAfter.every((s) => Number(s) > 0 && Number(s) <= 30),
      retryAfter.join(),
    );
    // The page's token from an address that never gave it: the bearer token and the form wait.
    const fresh = '127.0.0.200';
    const page = await call(`${base}/`, { headers: bearer(UI), from: fresh });
    assert.equal(page.status, 429);
    assert.ok(Number(page.headers['retry-after']) > 0);
    assert.match(page.body, /too many wrong tokens from many addresses/i);
    const form = await call(`${base}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: UI, next: '/' }).toString(),
      from: fresh,
    });
    assert.equal(form.status, 429);
    assert.equal(form.headers['set-cookie'], undefined);
    // The other tokens are not the page's: checked as ever, from that address too.
    assert.equal(
      (
        await call(`${base}/api/v1/suspend`, {
          method: 'POST',
          headers: bearer(API),
          body: '{}',
          from: fresh,
        })
      ).status,
      200,
    );
    assert.equal(
      (await call(`${base}/api/v1/artifacts`, { headers: bearer(UPLOAD), from: fresh })).status,
      200,
    );
    // The client that gave the page's token gets in still: by its session, by the token, and
    // by logging in again.
    assert.equal((await call(`${base}/`, { headers: { cookie: session ?? '' } })).status, 200);
    assert.equal((await call(`${base}/`, { headers: bearer(UI) })).status, 200);
    assert.equal((await login(base)).status, 303);
    assert.match(
      stderr(),
      /too many wrong tokens from many addresses: checks of this token wait, but from addresses that gave it in the last day/,
    );
    assert.match(stderr(), /"secret":"ui"/);
  });
});
