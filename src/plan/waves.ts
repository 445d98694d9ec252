import type { AppliedState } from '../state/applied.js';
import type { ClusterModel, SiteModel, Wave } from '../validate/model.js';
import type { ClusterPlan } from './types.js';
import { isoMinute } from './windows.js';

/** The wave a cluster is in (0-based): the first that names or selects it; none: after the last. */
export function waveOf(
  cluster: string,
  model: Pick<ClusterModel, 'labels'> | undefined,
  waves: readonly Wave[],
): number {
  const i = waves.findIndex((w) =>
    Array.isArray(w)
      ? w.includes(cluster)
      : Object.entries(w.matchLabels).every(([k, v]) => model?.labels?.[k] === v),
  );
  return i === -1 ? waves.length : i;
}

/**
 * Waves across clusters: a cluster's changes start only when every cluster of the waves
 * before its own has nothing left to apply (a failed apply leaves its actions planned, so a
 * failed wave stops the rest), is not blocked, and has stayed as it is for `soak` since bpa
 * last changed it. Otherwise its actions are deferred: until the soak ends (a time serve wakes
 * up for), or until the wave before is through. Pure: `now` is passed in; not hashed.
 */
export function gateWaves(
  clusters: ClusterPlan[],
  model: SiteModel,
  applied: AppliedState,
  now: number | undefined,
): void {
  const waves = model.waves;
  if (!waves || now === undefined) return;
  const index = new Map(
    clusters.map((c) => [
      c.cluster,
      waveOf(
        c.cluster,
        model.clusters.find((m) => m.name === c.cluster),
        waves.waves,
      ),
    ]),
  );
  for (const c of clusters) {
    if (!c.actions.length || c.gate?.state === 'suspended' || c.gate?.state === 'deferred')
      continue;
    const mine = index.get(c.cluster) ?? 0;
    const before = clusters.filter((e) => (index.get(e.cluster) ?? 0) < mine);
    const busy = before.filter(
      (e) => e.actions.length || e.notes.some((n) => n.startsWith('blocked')),
    );
    const wave = `wave ${mine + 1}`;
    if (busy.length) {
      // Looked at again once a wave applied now could have soaked (serve wakes up for it).
      c.gate = {
        state: 'deferred',
        reason: 'WaitingForWave',
        opensAt: isoMinute(Math.ceil((now + Math.max(waves.soakMs, 60_000)) / 60_000) * 60_000),
        message: `${wave} waits for the waves before it: ${busy.map((e) => `${e.cluster} (${e.actions.length ? `${e.actions.map((a) => a.kind).join(', ')} to apply first` : 'blocked'})`).join(', ')}`,
      };
      continue;
    }
    const soakEnds = Math.max(
      0,
      ...before.map((e) => {
        const at = applied.clusters.get(e.cluster)?.appliedAt;
        return at ? Date.parse(at) + waves.soakMs : 0;
      }),
    );
    if (soakEnds > now) {
      const at = isoMinute(Math.ceil(soakEnds / 60_000) * 60_000);
      c.gate = {
        state: 'deferred',
        reason: 'WaitingForWave',
        opensAt: at,
        message: `${wave} waits until the waves before it have stayed Ready for ${Math.round(waves.soakMs / 1000)}s, at ${at}`,
      };
    }
  }
}
