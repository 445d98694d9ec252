import { error, pointer, warning, type Problem } from '../util/problem.js';
import { isTimeZone } from '../util/time-zone.js';
import { at, spec, type Doc } from './doc.js';
import { parseDuration } from '../util/duration.js';
import type {
  ClusterModel,
  Day2Settings,
  MaintenanceWindow,
  RolloutSettings,
  Wave,
  Waves,
  Weekday,
} from './model.js';

/**
 * The day-2 settings of the Site document (the default of every cluster): its maintenance
 * windows (every time zone checked), what they gate, and whether the site is suspended.
 */
export function siteDay2(site: Doc | undefined, problems: Problem[]): Day2Settings {
  const s = site ? spec(site) : {};
  const windows = site ? readWindows(site, s, problems) : undefined;
  return {
    windows: windows ?? [],
    gate: s['maintenanceGate'] === 'all' ? 'all' : 'running',
    suspend: s['suspend'] === true,
    ...(windows !== undefined ? { windowsFrom: 'Site' as const } : {}),
    ...(s['suspend'] === true ? { suspendFrom: 'Site' as const } : {}),
  };
}

/**
 * A cluster's day-2 settings: what its Cluster document sets, else the Site's. A suspended
 * Site suspends every cluster, whatever the Cluster says: the site-wide stop is the one an
 * operator reaches for in an emergency.
 */
export function clusterDay2(
  clusterDoc: Doc | undefined,
  site: Day2Settings,
  problems: Problem[],
): Day2Settings {
  if (!clusterDoc) return site;
  const s = spec(clusterDoc);
  const windows = readWindows(clusterDoc, s, problems);
  const suspend = site.suspend || s['suspend'] === true;
  const gate = s['maintenanceGate'];
  const rollout = readRollout(s['rollout']);
  return {
    ...(rollout ? { rollout } : {}),
    windows: windows ?? site.windows,
    gate: gate === 'all' || gate === 'running' ? gate : site.gate,
    suspend,
    ...(windows !== undefined
      ? { windowsFrom: 'Cluster' as const }
      : site.windowsFrom
        ? { windowsFrom: site.windowsFrom }
        : {}),
    ...(site.suspend
      ? { suspendFrom: 'Site' as const }
      : suspend
        ? { suspendFrom: 'Cluster' as const }
        : {}),
  };
}

function readWindows(
  d: Doc,
  s: Record<string, unknown>,
  problems: Problem[],
): MaintenanceWindow[] | undefined {
  const raw = s['maintenanceWindows'];
  if (!Array.isArray(raw)) return undefined;
  return raw.map((item: unknown, i): MaintenanceWindow => {
    const w = (item ?? {}) as Record<string, unknown>;
    const timezone = typeof w['timezone'] === 'string' ? w['timezone'] : 'UTC';
    if (!isTimeZone(timezone)) {
      problems.push(
        error(
          'INVALID_TIMEZONE',
          `maintenance window ${i + 1}: time zone ${JSON.stringify(timezone)} is not an IANA time zone (such as Europe/Berlin or UTC)`,
          at(d, pointer('spec', 'maintenanceWindows', i, 'timezone')),
        ),
      );
    }
    return {
      days: Array.isArray(w['days']) ? (w['days'] as Weekday[]) : [],
      start: String(w['start'] ?? '00:00'),
      end: String(w['end'] ?? '24:00'),
      timezone,
    };
  });
}

/** A Cluster's `spec.rollout`, its defaults filled in (the schema checked its shape). */
function readRollout(raw: unknown): RolloutSettings | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const drain = (r['drain'] ?? {}) as Record<string, unknown>;
  const health = (r['healthCheck'] ?? {}) as Record<string, unknown>;
  const ms = (v: unknown, fallback: string): number =>
    parseDuration(typeof v === 'string' ? v : fallback);
  const grace = typeof drain['gracePeriod'] === 'string' ? drain['gracePeriod'] : undefined;
  const max = r['maxUnavailable'];
  return {
    maxUnavailable: typeof max === 'number' || typeof max === 'string' ? max : 1,
    drain: {
      enabled: drain['enabled'] !== false,
      timeoutMs: ms(drain['timeout'], '10m'),
      ...(grace ? { gracePeriodSeconds: Math.round(parseDuration(grace) / 1000) } : {}),
      ignoreDaemonSets: drain['ignoreDaemonSets'] !== false,
      deleteEmptyDirData: drain['deleteEmptyDirData'] === true,
    },
    healthCheck: {
      timeoutMs: ms(health['timeout'], '5m'),
      ...(Array.isArray(health['command']) ? { command: health['command'].map(String) } : {}),
    },
  };
}

/** The Site's `spec.rollout` (waves across clusters), when it sets waves. */
export function siteWaves(site: Doc | undefined): Waves | undefined {
  const r = site ? (spec(site)['rollout'] as Record<string, unknown> | undefined) : undefined;
  if (!r || !Array.isArray(r['waves'])) return undefined;
  const waves = (r['waves'] as unknown[]).map((w): Wave =>
    Array.isArray(w)
      ? w.map(String)
      : { matchLabels: { ...((w as { matchLabels?: Record<string, string> }).matchLabels ?? {}) } },
  );
  const soak = typeof r['soak'] === 'string' ? parseDuration(r['soak']) : 0;
  return { waves, soakMs: soak };
}

/** A wave that names a cluster the site does not have is most likely a typo: said so. */
export function checkWaves(
  site: Doc | undefined,
  clusters: ClusterModel[],
  problems: Problem[],
): void {
  const waves = siteWaves(site);
  if (!site || !waves) return;
  const names = new Set(clusters.map((c) => c.name));
  waves.waves.forEach((w, i) => {
    if (!Array.isArray(w)) return;
    w.forEach((name, j) => {
      if (!names.has(name))
        problems.push(
          warning(
            'WAVE_UNKNOWN_CLUSTER',
            `rollout wave ${i + 1} names cluster "${name}", which the site does not have`,
            at(site, pointer('spec', 'rollout', 'waves', i, j)),
          ),
        );
    });
  });
}
