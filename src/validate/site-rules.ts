import { error, pointer, type Problem } from '../util/problem.js';
import type { ClusterModel } from './model.js';

/** One MAC is one host: two nodes of the site (in any cluster) may not share it. */
export function checkMacsAcrossSite(clusters: ClusterModel[], problems: Problem[]): void {
  const owners = new Map<string, string>();
  for (const c of clusters) {
    for (const n of c.nodes) {
      if (!n.mac) continue;
      const who = `${c.name}/${n.name}`;
      const first = owners.get(n.mac);
      if (first !== undefined && first !== who) {
        problems.push(
          error(
            'DUPLICATE_MAC',
            `mac-address ${n.mac} of node "${n.name}" is already used by node ${first}`,
            {
              file: c.provisioning.ref.file,
              doc: c.provisioning.ref.doc,
              pointer: `${n.pointer}/mac-address`,
            },
          ),
        );
        continue;
      }
      owners.set(n.mac, who);
    }
  }
}

/**
 * A dual-role node gets the packages of both roles: a package pinned to one version in
 * masterSoftware and another in workerSoftware cannot be installed on it. Reported on the
 * workerSoftware entry, once per package.
 */
export function checkPackageConflicts(clusters: ClusterModel[], problems: Problem[]): void {
  for (const c of clusters) {
    const dual = c.nodes.find((n) => n.roles.includes('master') && n.roles.includes('worker'));
    if (!dual || !c.software) continue;
    const masters = new Map(c.masterSoftware.map((p) => [p.name, p]));
    c.workerSoftware.forEach((p, i) => {
      const m = masters.get(p.name);
      if (!m || m.version === p.version) return;
      problems.push(
        error(
          'PACKAGE_CONFLICT',
          `cluster ${c.name}: package "${p.name}" is pinned to ${m.version ?? 'any version'} for masters and ${p.version ?? 'any version'} for workers; a dual-role node (${dual.name}) cannot have both`,
          {
            file: c.software?.ref.file,
            doc: c.software?.ref.doc,
            pointer: pointer('spec', 'workerSoftware', i),
          },
        ),
      );
    });
  }
}
