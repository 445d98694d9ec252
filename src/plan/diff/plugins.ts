import { word } from '../../util/pluralize.js';
import { inputsOf, type ClusterDiff } from './context.js';

/**
 * KUD plugins added to a running cluster: an install-plugins action. Plugins removed from the
 * site are only noted: bpa does not uninstall them.
 */
export function diffPlugins(d: ClusterDiff): void {
  const { cluster, applied } = d;
  const added = cluster.plugins.filter((p) => !applied.plugins.includes(p));
  if (added.length) {
    d.actions.push({
      kind: 'install-plugins',
      cluster: cluster.name,
      nodes: [],
      reason: `${word(added.length, 'plugin')} ${added.join(', ')} added to KUDPlugins`,
      inputs: inputsOf(cluster, 'provisioning'),
      plugins: added,
    });
  }
  const gone = applied.plugins.filter((p) => !cluster.plugins.includes(p));
  if (gone.length)
    d.notes.push(
      `${word(gone.length, 'plugin')} ${gone.join(', ')} removed from KUDPlugins: bpa does not uninstall plugins; remove ${word(gone.length, 'it', 'them')} by hand`,
    );
}
