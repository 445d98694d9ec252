/**
 * Why a node found no host: what it needs, how many eligible hosts would do and who holds
 * them, which host came closest, and which hosts cannot be used at all.
 */
import { describeShortfallsBrief, fits, shortfalls } from './need.js';
import type { Need, Shortfall } from './need.js';
import type { HostClass, SiteHost, Taker } from './site-hosts.js';
import { pluralize, word } from '../../util/pluralize.js';

const LISTED = 3;
const LISTED_INELIGIBLE = 5;

function listWithMore(items: string[], total: number, sep: string): string {
  const more = total - items.length;
  return more > 0 ? `${items.join(sep)}${sep}and ${more} more` : items.join(sep);
}

/** "3 hosts qualify, all taken by a/worker-1, a/master-1 and 1 more; nearest: node-7 has cpu 16" */
export function describeCompetition(
  need: Need,
  classes: readonly HostClass[],
  takers: ReadonlyMap<SiteHost, Taker>,
): string {
  let qualify = 0;
  let taken = 0;
  const names: string[] = [];
  let nearest: { entry: SiteHost; miss: Shortfall[]; score: number } | undefined;
  for (const cls of classes) {
    if (fits(need, cls.cap)) {
      qualify += cls.hosts.length;
      for (const entry of cls.hosts) {
        const taker = takers.get(entry);
        if (!taker) continue;
        taken++;
        if (names.length < LISTED) names.push(`${taker.cluster}/${taker.node}`);
      }
      continue;
    }
    const miss = shortfalls(need, cls.cap);
    // Fewest unmet requirements first, then the smallest relative gap.
    const score = miss.length * 10 + miss.reduce((sum, s) => sum + s.gap, 0);
    const first = cls.hosts[0];
    if (first && (!nearest || score < nearest.score)) nearest = { entry: first, miss, score };
  }
  let text: string;
  if (qualify === 0) text = 'no eligible host qualifies';
  else {
    const who = listWithMore(names, taken, ', ');
    text =
      taken === qualify
        ? `${pluralize(qualify, 'host')} ${word(qualify, 'qualifies', 'qualify')}, all taken by ${who}`
        : `${pluralize(qualify, 'host')} qualify, ${taken} taken by ${who}`;
  }
  if (nearest)
    text += `; nearest: ${nearest.entry.host.key} has ${describeShortfallsBrief(nearest.miss)}`;
  return text;
}

/** "2 hosts ineligible: node-10 provisioning state 'inspecting'; node-9 powered off" */
export function describeIneligible(ineligible: readonly SiteHost[]): string {
  if (ineligible.length === 0) return '';
  const shown = ineligible
    .slice(0, LISTED_INELIGIBLE)
    .map((e) => `${e.host.key} ${e.host.ineligibleReason ?? 'not eligible'}`);
  return `${pluralize(ineligible.length, 'host')} ineligible: ${listWithMore(shown, ineligible.length, '; ')}`;
}
