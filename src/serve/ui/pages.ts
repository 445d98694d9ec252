import type { ViewClusterPlan, ViewHost } from '../../reconcile/view.js';
import type { ClusterStatusDoc, Condition, LastOperation } from '../../report/status.js';
import type { HistoryEntry } from '../../source/history.js';
import { pluralize } from '../../util/pluralize.js';
import { badge, html, rev, when, type Html } from './html.js';
import type { UiSnapshot } from './model.js';

export const PAGE_SIZE = 100;

/** What a page needs besides the snapshot. */
export interface PageInput {
  snap: UiSnapshot;
  now: number;
}

/** The controller's line in the header: what it is doing now. */
export function controllerLine({ snap, now }: PageInput): Html {
  const c = snap.controller;
  const doing = c.paused
    ? html`${badge('Standby')} not the leader`
    : c.running
      ? html`${badge('Reconciling')} since ${when(c.runningSince, now)}`
      : html`${badge('Idle')}`;
  return html`<p class="controller" id="controller">
    ${doing}
    ${c.lastResult ? html` · last reconcile <strong>${c.lastResult}</strong> ${when(c.lastFinishedAt, now)}` : html` · no reconcile has finished yet`}
    ${c.consecutiveFailures ? html` · <span class="bad">${pluralize(c.consecutiveFailures, 'failure')} in a row</span>` : ''}
    ${c.nextRunAt && !c.running ? html` · next ${when(c.nextRunAt, now)}` : ''}
    ${c.error ? html`<br /><span class="bad"><code>${c.error.code}</code> ${c.error.message}</span>` : ''}
  </p>`;
}

function conditions(list: readonly Condition[], now: number): Html {
  return html`<div class="scroll">
    <table class="conds">
      <thead>
        <tr>
          <th>Condition</th>
          <th>Status</th>
          <th>Reason</th>
          <th>Message</th>
          <th>Since</th>
        </tr>
      </thead>
      <tbody>
        ${list.map(
          (c) =>
            html`<tr>
              <td>${c.type}</td>
              <td>${c.status}</td>
              <td>${c.reason}</td>
              <td class="msg">${c.message}</td>
              <td>${when(c.lastTransitionTime, now)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function readyMessage(list: readonly Condition[]): string {
  return list.find((c) => c.type === 'Ready')?.message ?? '';
}

/** The actions of a cluster's plan that are not done. */
function open(plan: ViewClusterPlan | undefined): ViewClusterPlan['actions'] {
  return (plan?.actions ?? []).filter((a) => a.state !== 'done');
}

function planFor(snap: UiSnapshot, cluster: string): ViewClusterPlan | undefined {
  return snap.view?.plan?.clusters.find((c) => c.cluster === cluster);
}

export function overviewPage(input: PageInput, history: HistoryEntry[]): Html {
  const { snap, now } = input;
  const site = snap.site;
  const plan = snap.view?.plan;
  const pending = plan?.clusters.reduce((n, c) => n + open(c).length, 0) ?? 0;
  return html` <section>
      <h2>
        Site
        ${site ? html`<span class="name">${site.metadata.name}</span> ${badge(site.status.phase)}` : ''}
      </h2>
      ${
        site
          ? html`<p>
                revision ${rev(site.status.source.revision)} · last applied
                ${rev(site.status.source.appliedRevision)}
              </p>
              ${conditions(site.status.conditions, now)}`
          : html`<p class="muted">No report yet: the first reconcile has not finished.</p>`
      }
    </section>
    <section>
      <h2>Clusters <span class="count">${snap.clusters.length}</span></h2>
      ${
        snap.clusters.length
          ? html`<div class="scroll">
              <table id="clusters">
                <thead>
                  <tr>
                    <th>Cluster</th>
                    <th>Phase</th>
                    <th>Nodes</th>
                    <th>Revision</th>
                    <th>Pending</th>
                    <th>Message</th>
                  </tr>
                </thead>
                <tbody>
                  ${snap.clusters.map((c) => {
                    const nodes = c.status.nodes;
                    const up = nodes.filter((n) => n.reachable !== false).length;
                    const p = planFor(snap, c.metadata.name);
                    return html`<tr data-cluster="${c.metadata.name}">
                      <td>
                        <a href="/clusters/${encodeURIComponent(c.metadata.name)}"
                          >${c.metadata.name}</a
                        >
                      </td>
                      <td>${badge(c.status.phase)}</td>
                      <td>${up}/${nodes.length}</td>
                      <td>${rev(c.status.source.revision)}</td>
                      <td>
                        ${open(p).length ? pluralize(open(p).length, 'action') : html`<span class="muted">none</span>`}
                      </td>
                      <td class="msg">${readyMessage(c.status.conditions)}</td>
                    </tr>`;
                  })}
                </tbody>
              </table>
            </div>`
          : html`<p class="muted">No clusters reported.</p>`
      }
    </section>
    <section>
      <h2>Plan ${plan ? html`<code title="${plan.hash}">${plan.hash.slice(0, 12)}</code>` : ''}</h2>
      ${
        plan
          ? html`<p>
                ${pending ? `${pluralize(pending, 'action')} not applied yet` : plan.clusters.some((c) => c.actions.length) ? 'Applied.' : 'No changes: the site is as the repository says.'}
              </p>
              ${plan.clusters.filter((c) => open(c).length || c.notes.length).map((c) => planBlock(c, true))}
              ${problems(plan.problems)}`
          : html`<p class="muted">No plan yet.</p>`
      }
    </section>
    <section>
      <h2>Recent history</h2>
      ${historyTable(history.slice(0, 10), snap, now)}
      <p><a href="/history">All history</a></p>
    </section>`;
}

function problems(list: ReadonlyArray<{ code: string; message: string; where?: string }>): Html {
  if (!list.length) return html``;
  return html`<h3>Why nodes found no host</h3>
    <ul class="problems">
      ${list.map((p) => html`<li><code>${p.code}</code> ${p.where ? html`<code>${p.where}</code> ` : ''}${p.message}</li>`)}
    </ul>`;
}

/** Where a reported error is: its file and line, or in operator mode its object and field. */
function errorPlace(e: { file?: string; line?: number; object?: string; field?: string }): string {
  if (e.object) return e.field ? `${e.object} ${e.field}` : e.object;
  return e.file ? `${e.file}${e.line ? `:${e.line}` : ''}` : '';
}

function planBlock(c: ViewClusterPlan, titled: boolean): Html {
  return html`<div class="plan">
    ${titled ? html`<h3><a href="/clusters/${encodeURIComponent(c.cluster)}">${c.cluster}</a></h3>` : ''}
    ${
      c.actions.length
        ? html`<ol class="actions">
            ${c.actions.map((a) => html`<li><strong>${a.kind}</strong> ${a.nodes.join(', ')}<br /><span class="muted">${a.reason}</span></li>`)}
          </ol>`
        : html`<p class="muted">No actions.</p>`
    }
    ${
      c.notes.length
        ? html`<p>Deferred:</p>
            <ul class="notes">
              ${c.notes.map((n) => html`<li>${n}</li>`)}
            </ul>`
        : ''
    }
  </div>`;
}

/** Pending package changes of a node in the plan: what drifted or is to change. */
function driftOf(plan: ViewClusterPlan | undefined, node: string): string[] {
  const out: string[] = [];
  for (const a of plan?.actions ?? [])
    for (const p of a.packages ?? [])
      if (p.node === node) out.push(`${p.name} ${p.from ?? '∅'}→${p.to ?? '∅'}`);
  return out;
}

export function clusterPage(input: PageInput, doc: ClusterStatusDoc): Html {
  const { snap, now } = input;
  const name = doc.metadata.name;
  const plan = planFor(snap, name);
  const ops = doc.status.lastOperation ?? [];
  return html` <section>
      <h2>Cluster <span class="name">${name}</span> ${badge(doc.status.phase)}</h2>
      <p>
        revision ${rev(doc.status.source.revision)} · plan
        <code>${(doc.status.source.planHash ?? '-').slice(0, 12)}</code>
        ${doc.status.kubernetesVersion ? html` · Kubernetes ${doc.status.kubernetesVersion}` : ''}
        ${doc.status.plugins.length ? html` · plugins ${doc.status.plugins.join(', ')}` : ''}
      </p>
      ${conditions(doc.status.conditions, now)}
      ${
        doc.status.errors?.length
          ? html`<ul class="problems">
              ${doc.status.errors.map((e) => html`<li><code>${e.code}</code> ${errorPlace(e) ? html`<code>${errorPlace(e)}</code> ` : ''}${e.message}</li>`)}
            </ul>`
          : ''
      }
    </section>
    <section>
      <h2>Nodes <span class="count">${doc.status.nodes.length}</span></h2>
      ${
        doc.status.nodes.length
          ? html`<div class="scroll">
              <table id="nodes">
                <thead>
                  <tr>
                    <th>Node</th>
                    <th>Roles</th>
                    <th>Host</th>
                    <th>MAC</th>
                    <th>Address</th>
                    <th>Reachable</th>
                    <th>Packages</th>
                    <th>Drift / pending</th>
                    <th>Rollout</th>
                  </tr>
                </thead>
                <tbody>
                  ${doc.status.nodes.map((n) => {
                    const drift = driftOf(plan, n.name);
                    const pendingActions = (plan?.actions ?? [])
                      .filter((a) => a.nodes.includes(n.name))
                      .map((a) => a.kind);
                    const last = ops.filter((o) => o.nodes.includes(n.name));
                    const running = snap.active.nodes.includes(`${name}/${n.name}`);
                    return html`<tr>
                      <td>${n.name}</td>
                      <td>${n.roles.join(', ')}</td>
                      <td>${n.host}</td>
                      <td><code>${n.mac}</code></td>
                      <td>${n.ip}</td>
                      <td>
                        ${n.reachable === undefined ? html`<span class="muted">-</span>` : n.reachable ? badge('Yes') : badge('No')}
                      </td>
                      <td class="pkgs">
                        ${Object.entries(n.packages ?? {}).map(([p, v]) => html`<span>${p}=${v ?? 'absent'}</span> `)}
                      </td>
                      <td>
                        ${drift.length ? html`<span class="warn">${drift.join('; ')}</span>` : html`<span class="muted">none</span>`}
                      </td>
                      <td>
                        ${running ? html`${badge('Running')}` : pendingActions.length ? html`${badge('Pending')} ${pendingActions.join(', ')}` : last.length ? last.map((o) => html`${o.action} ${badge(o.result)} `) : html`<span class="muted">-</span>`}
                      </td>
                    </tr>`;
                  })}
                </tbody>
              </table>
            </div>`
          : html`<p class="muted">No nodes applied yet.</p>`
      }
      ${
        plan?.nodes.some((n) => n.change !== 'keep')
          ? html`<h3>Placement in the plan</h3>
              <div class="scroll">
                <table>
                  <thead>
                    <tr>
                      <th>Node</th>
                      <th>Change</th>
                      <th>Host</th>
                      <th>Address</th>
                      <th>Why this host</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${plan.nodes.map(
                      (n) =>
                        html`<tr>
                          <td>${n.name}</td>
                          <td>${n.change}</td>
                          <td>${n.host}</td>
                          <td>${n.ip}</td>
                          <td class="msg">${n.placement}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`
          : ''
      }
    </section>
    <section>
      <h2>Plan</h2>
      ${plan ? planBlock(plan, false) : html`<p class="muted">No plan for this cluster.</p>`}
    </section>
    <section>
      <h2>Last operation</h2>
      ${
        ops.length
          ? html`<ul class="ops">
              ${ops.map((o) => html`<li>${o.action} ${o.nodes.join(', ')} ${badge(o.result)} ${when(o.endedAt, now)}${failureOf(o, plan)}</li>`)}
            </ul>`
          : html`<p class="muted">None yet.</p>`
      }
    </section>`;
}

/**
 * A failed operation: where and how (from the report), the end of the installer's output
 * (from the last run's plan, when it is the same operation) and a link to its log.
 */
function failureOf(o: LastOperation, plan: ViewClusterPlan | undefined): Html {
  if (o.result !== 'failed') return html``;
  const detail = plan?.actions.find(
    (a) => a.kind === o.action && a.state === 'failed' && a.nodes.join() === o.nodes.join(),
  )?.error;
  const log = detail?.log ?? o.log;
  return html`<br /><code>${o.code ?? detail?.code ?? 'failed'}</code
    >${o.step ? ` at step ${o.step}` : ''}${o.exitCode !== undefined ? `, exit ${o.exitCode}` : ''}${o.signal ? `, signal ${o.signal}` : ''}${log ? html` · <a href="${logHref(log)}">log ${log}</a>` : ''}${detail ? html`<br /><span class="msg">${detail.message}</span>` : ''}`;
}

/** Where the page serves a log (`/api/v1/logs/<cluster>/<file>`). */
export function logHref(id: string): string {
  return `/api/v1/logs/${id.split('/').map(encodeURIComponent).join('/')}`;
}

export interface InventoryQuery {
  q: string;
  show: 'all' | 'eligible' | 'ineligible' | 'free' | 'held';
  page: number;
}

export function filterHosts(hosts: readonly ViewHost[], query: InventoryQuery): ViewHost[] {
  const q = query.q.toLowerCase();
  return hosts.filter((h) => {
    if (query.show === 'eligible' && !h.eligible) return false;
    if (query.show === 'ineligible' && h.eligible) return false;
    if (query.show === 'free' && (h.heldBy || !h.eligible)) return false;
    if (query.show === 'held' && !h.heldBy) return false;
    if (!q) return true;
    return (
      h.key.toLowerCase().includes(q) ||
      h.macs.some((m) => m.includes(q)) ||
      (h.heldBy ?? '').toLowerCase().includes(q)
    );
  });
}

export function inventoryPage(input: PageInput, query: InventoryQuery): Html {
  const inv = input.snap.view?.inventory;
  if (!inv)
    return html`<section>
      <h2>Inventory</h2>
      <p class="muted">Not observed yet.</p>
    </section>`;
  const matching = filterHosts(inv.hosts, query);
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  const page = Math.min(Math.max(1, query.page), pages);
  const rows = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const link = (p: number): string =>
    `/inventory?${new URLSearchParams({ q: query.q, show: query.show, page: String(p) }).toString()}`;
  const eligible = inv.hosts.filter((h) => h.eligible).length;
  const held = inv.hosts.filter((h) => h.heldBy).length;
  return html`<section>
    <h2>Inventory <span class="count">${inv.hosts.length}</span></h2>
    <p>${inv.from} · ${eligible} eligible · ${held} hold a node</p>
    <form method="get" action="/inventory" class="filter">
      <input
        type="search"
        name="q"
        value="${query.q}"
        placeholder="host, MAC or node"
        aria-label="search"
      />
      <select name="show" aria-label="show">
        ${(['all', 'eligible', 'ineligible', 'free', 'held'] as const).map((s) => html`<option value="${s}" ${s === query.show ? html` selected` : ''}>${s}</option>`)}
      </select>
      <button type="submit">Filter</button>
    </form>
    <p>
      ${matching.length} host${matching.length === 1 ? '' : 's'} · page ${page} of ${pages}
      ${page > 1 ? html` · <a href="${link(page - 1)}" rel="prev">previous</a>` : ''}${page < pages ? html` · <a href="${link(page + 1)}" rel="next">next</a>` : ''}
    </p>
    <div class="scroll">
      <table id="hosts">
        <thead>
          <tr>
            <th>Host</th>
            <th>MACs</th>
            <th>CPU</th>
            <th>RAM</th>
            <th>SR-IOV</th>
            <th>QAT</th>
            <th>Eligible</th>
            <th>Held by</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (h) =>
              html`<tr>
                <td>${h.key}</td>
                <td><code>${h.macs.join(' ')}</code></td>
                <td>${h.cpu ?? '-'}</td>
                <td>
                  ${h.ramMebibytes !== undefined ? `${Math.round(h.ramMebibytes / 1024)} GiB` : '-'}
                </td>
                <td>${h.sriov ? 'yes' : ''}</td>
                <td>${h.qat ? 'yes' : ''}</td>
                <td>
                  ${h.eligible ? badge('Yes') : html`${badge('No')} <span class="msg">${h.reason ?? ''}</span>`}
                </td>
                <td>
                  ${h.heldBy ? html`<a href="/clusters/${encodeURIComponent(h.heldBy.split('/')[0] ?? '')}">${h.heldBy}</a>` : h.consumer ? html`<span class="muted">${h.consumer}</span>` : html`<span class="muted">free</span>`}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${input.snap.view?.plan?.problems.length ? problems(input.snap.view.plan.problems) : ''}
  </section>`;
}

/**
 * A person's commit, then what bpa did with it (its status commits name the revision in a
 * Bpa-Source trailer) and the result of the reconciles of that revision.
 */
function historyTable(entries: HistoryEntry[], snap: UiSnapshot, now: number): Html {
  const people = entries.filter((e) => !e.bpaSource);
  if (!entries.length && !snap.runs.length)
    return html`<p class="muted">
      No history: a watched directory has no commits, and no reconcile has finished yet.
    </p>`;
  if (!people.length)
    return html`<ul class="runs">
      ${snap.runs.slice(0, 20).map((r) => runItem(r, now))}
    </ul>`;
  return html`<div class="scroll">
    <table class="history">
      <thead>
        <tr>
          <th>Commit</th>
          <th>Change</th>
          <th>What bpa did</th>
          <th>Result</th>
        </tr>
      </thead>
      <tbody>
        ${people.map((e) => {
          const reports = entries.filter((b) => b.bpaSource === e.commit);
          const runs = snap.runs.filter((r) => r.revision === e.commit);
          const result = runs[0]?.result;
          return html`<tr id="c-${e.commit}">
            <td>${rev(e.commit)}<br />${when(e.at, now)}</td>
            <td>${e.subject}<br /><span class="muted">${e.author}</span></td>
            <td>
              ${reports.length ? reports.map((b) => html`<div>${rev(b.commit)} ${b.subject.replace(/^bpa: /, '').replace(/ @ \S+$/, '')}</div>`) : html`<span class="muted">no report yet</span>`}
            </td>
            <td>
              ${result ? badge(result) : reports.length ? badge('Reported') : html`<span class="muted">-</span>`}
            </td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

function runItem(r: UiSnapshot['runs'][number], now: number): Html {
  return html`<li>
    ${when(r.finishedAt, now)} ${r.trigger}: ${badge(r.result)} ${rev(r.revision)}
    ${r.did.join('; ')}${r.error ? html` <span class="bad"><code>${r.error.code}</code> ${r.error.message}</span>` : ''}
  </li>`;
}

export function historyPage(input: PageInput, entries: HistoryEntry[]): Html {
  return html`<section>
      <h2>History</h2>
      ${historyTable(entries, input.snap, input.now)}
    </section>
    <section>
      <h2>Reconciles since bpa started</h2>
      ${
        input.snap.runs.length
          ? html`<ul class="runs">
              ${input.snap.runs.map((r) => runItem(r, input.now))}
            </ul>`
          : html`<p class="muted">None yet.</p>`
      }
    </section>`;
}

export function logsPage(cluster?: string): Html {
  return html`<section>
    <h2>Installer output${cluster ? html` of ${cluster}` : ''}</h2>
    <p class="muted">Live: lines appear as the installer prints them.</p>
  </section>`;
}

/** The whole document. `view` is replaced in place by the script when the state changes. */
export function layout(opts: {
  title: string;
  site?: string;
  nav: string;
  controller: Html;
  body: Html;
  /** The live installer log below the view: all clusters ('') or one; none when undefined. */
  live?: string;
  /** Show a log-out button (the page asks for a token). */
  logout?: boolean;
}): Html {
  const links: Array<[string, string]> = [
    ['/', 'Overview'],
    ['/inventory', 'Inventory'],
    ['/history', 'History'],
    ['/logs', 'Installer'],
  ];
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${opts.title} · bpa</title>
        <link rel="stylesheet" href="/ui/app.css" />
        <script src="/ui/app.js" defer></script>
      </head>
      <body>
        <header>
          <h1>
            <a href="/">bpa</a>${opts.site ? html` <span class="name">${opts.site}</span>` : ''}
          </h1>
          <nav>
            ${links.map(([href, text]) => html`<a href="${href}" ${href === opts.nav ? html` aria-current="page"` : ''}>${text}</a>`)}
          </nav>
        </header>
        <div id="view">
          ${opts.controller}
          <main>${opts.body}</main>
        </div>
        ${
          opts.live !== undefined
            ? html`<section class="live">
                <h2>Live installer output</h2>
                <pre class="log" id="log" data-cluster="${opts.live}" aria-live="polite"></pre>
              </section>`
            : ''
        }
        <footer>
          <span id="conn" class="muted">live updates: connecting…</span
          >${opts.logout ? html` <form method="post" action="/ui/logout" class="logout"><button type="submit">Log out</button></form>` : ''}
        </footer>
      </body>
    </html>`;
}
