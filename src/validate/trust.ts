/**
 * What a site repository may ask of the machine bpa runs on. Whoever can push to the site
 * decides what the site should be; what runs on the bootstrap machine (installer commands
 * and image) and where its nodes take signed packages from is the operator's, unless the
 * operator opts in. Pure: the site settings and the operator's policy in, problems out.
 */
import { OPTIONS, type OptionSpec } from '../config/options.js';
import { error, pointer, type Problem } from '../util/problem.js';
import type { SiteSettings } from './model.js';

export interface SitePolicy {
  /** --allow-site-commands: the site may set commands, the image and any package mirror. */
  allowSiteCommands: boolean;
  /** --package-mirrors: URL prefixes a Site packageMirror may point into. */
  packageMirrors: readonly string[];
}

/** What bpa allows a site when the operator said nothing. */
export const STRICT_POLICY: SitePolicy = { allowSiteCommands: false, packageMirrors: [] };

/** apt source options that turn off or weaken its signature check. */
const UNSIGNED = /^(trusted|allow-insecure|allow-weak|allow-downgrade-to-insecure)$/;

export function checkSiteTrust(
  site: SiteSettings | undefined,
  policy: SitePolicy = STRICT_POLICY,
): Problem[] {
  if (!site || policy.allowSiteCommands) return [];
  const where = (path: readonly string[]): Partial<Problem> => ({
    file: site.ref?.file,
    doc: site.ref?.doc,
    pointer: pointer('spec', ...path),
  });
  const problems: Problem[] = [];
  for (const option of Object.values(OPTIONS) as Array<OptionSpec<unknown>>) {
    if (!option.runsCode || !option.site || dig(site.spec, option.site) === undefined) continue;
    const field = `spec.${option.site.join('.')}`;
    problems.push(
      error(
        'SITE_COMMAND_NOT_ALLOWED',
        `${field} would run on the machine bpa runs on, with its SSH key and git credentials; a site may set it only when bpa runs with --allow-site-commands (BPA_ALLOW_SITE_COMMANDS). Remove it and set ${option.flag.split(' ')[0]} in bpa's configuration instead`,
        where(option.site),
      ),
    );
  }
  const mirror = site.spec['packageMirror'];
  if (typeof mirror === 'string') {
    const why = mirrorRefusal(mirror, policy.packageMirrors);
    if (why) {
      problems.push(
        error(
          'PACKAGE_MIRROR_NOT_ALLOWED',
          `packageMirror ${why}; a site may name it only when bpa runs with --allow-site-commands`,
          where(['packageMirror']),
        ),
      );
    }
  }
  return problems;
}

/** Why a packageMirror line needs the operator's opt-in, or undefined when it does not. */
export function mirrorRefusal(line: string, allowed: readonly string[]): string | undefined {
  const options = /^deb(?:-src)? \[([^\]]*)\] /.exec(line)?.[1] ?? '';
  const unsigned = options
    .split(/\s+/)
    .map((o) => o.split('='))
    .find(([key, value]) => UNSIGNED.test(key ?? '') && value === 'yes');
  if (unsigned) {
    return `sets [${unsigned.join('=')}], which makes apt on the nodes install packages nobody signed`;
  }
  const uri = line.replace(/^deb(?:-src)? (?:\[[^\]]*\] )?/, '').split(' ')[0] ?? '';
  if (allowed.some((prefix) => underPrefix(uri, prefix))) return undefined;
  const list = allowed.length ? allowed.join(', ') : 'none configured';
  return `points at ${describeUri(uri)}, which is under none of the mirrors bpa allows (--package-mirrors: ${list})`;
}

/** Whether `uri` is `prefix` or below it: same scheme, host and port, path at a `/` boundary. */
function underPrefix(uri: string, prefix: string): boolean {
  let u: URL;
  let p: URL;
  try {
    u = new URL(uri);
    p = new URL(prefix);
  } catch {
    return false;
  }
  if (u.protocol !== p.protocol || u.host !== p.host || u.username || u.password) return false;
  const base = p.pathname.endsWith('/') ? p.pathname : `${p.pathname}/`;
  const path = u.pathname.endsWith('/') ? u.pathname : `${u.pathname}/`;
  return path.startsWith(base);
}

function describeUri(uri: string): string {
  try {
    const u = new URL(uri);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return JSON.stringify(uri);
  }
}

function dig(obj: Record<string, unknown>, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}
