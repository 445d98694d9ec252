import { error, type Problem } from '../util/problem.js';
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
