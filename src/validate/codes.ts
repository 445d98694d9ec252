/**
 * Every problem code bpa reports about a site, with what it means and what to do. The list
 * is the contract of `-o json`; docs/site-format.md documents each entry (a test checks
 * that it does).
 */
export interface CodeInfo {
  severity: 'error' | 'warning' | 'notice';
  summary: string;
  fix: string;
}

export const CODES = {
  // Reading and parsing
  READ_ERROR: {
    severity: 'error',
    summary: 'a file or directory could not be read',
    fix: 'check permissions and that the path is a regular file',
  },
  FILE_TOO_LARGE: {
    severity: 'error',
    summary: 'a YAML file is larger than the size limit (default 1 MiB)',
    fix: 'split the file, or exclude it with .bpaignore if it is not site input',
  },
  TOO_MANY_FILES: {
    severity: 'error',
    summary: 'the site holds more YAML files than the limit',
    fix: 'exclude what is not site input with .bpaignore',
  },
  TOO_MANY_DOCUMENTS: {
    severity: 'error',
    summary: 'a file holds more YAML documents than the limit (default 1000)',
    fix: 'split the file',
  },
  BINARY_FILE: {
    severity: 'error',
    summary: 'a .yaml/.yml file holds NUL bytes',
    fix: 'remove the file or exclude it with .bpaignore',
  },
  NOT_UTF8: {
    severity: 'error',
    summary: 'a file is not valid UTF-8',
    fix: 're-save the file as UTF-8',
  },
  BYTE_ORDER_MARK: {
    severity: 'error',
    summary: 'a byte order mark (U+FEFF) inside a file, not at its very start',
    fix: 'remove it (files joined with cat keep the marks of the files after the first)',
  },
  SYMLINK_ESCAPE: {
    severity: 'error',
    summary: 'a symbolic link points outside the site directory',
    fix: 'copy the target into the site, or remove the link',
  },
  STATUS_NOT_DIRECTORY: {
    severity: 'warning',
    summary:
      'the site has a file (or a symbolic link) named status, where bpa writes its reports (status/)',
    fix: 'rename or remove it: bpa never deletes it, and writes no report while it is there',
  },
  YAML_SYNTAX: {
    severity: 'error',
    summary: 'the file is not valid YAML',
    fix: 'fix the syntax at the line shown (indentation, quoting, tabs)',
  },
  YAML_DUPLICATE_KEY: {
    severity: 'error',
    summary: 'a mapping has the same key twice',
    fix: 'remove or rename one of the keys; YAML does not allow duplicates',
  },
  YAML_ALIAS_LIMIT: {
    severity: 'error',
    summary: 'a document uses too many aliases, or expands too far through them',
    fix: 'write the values out; aliases are limited to guard against alias bombs',
  },
  YAML_TOO_DEEP: {
    severity: 'error',
    summary: 'mappings and sequences are nested deeper than the limit (default 64)',
    fix: 'flatten the structure',
  },

  SITE_EMPTY: {
    severity: 'error',
    summary:
      'the site holds no YAML documents (only status/, ignored files, or nothing): a wrong path, or an emptied repository',
    fix: 'check the site path (bpa validate PATH, --path); nothing is planned or applied for an empty site',
  },
  SITE_NO_CLUSTERS: {
    severity: 'error',
    summary: 'the site has documents but no cluster and no Site document',
    fix: 'check the site path; a site meant to have no cluster says so with a Site document',
  },

  // Document shape (JSON Schema)
  NOT_A_MAPPING: {
    severity: 'error',
    summary: 'a YAML document is not a mapping',
    fix: 'every document must be a mapping with apiVersion, kind, metadata and spec',
  },
  UNKNOWN_KIND: {
    severity: 'error',
    summary:
      'a document claims a bpa kind (bpa.akraino.org, or a BareMetalHost/HardwareData) with a kind or apiVersion bpa does not know',
    fix: 'use one of the kinds in docs/site-format.md with its apiVersion, or exclude the file with .bpaignore',
  },
  OTHER_KIND_SKIPPED: {
    severity: 'notice',
    summary:
      'a document of another Kubernetes kind (Secret, Machine, ConfigMap, ...) is skipped; bpa does not read it',
    fix: 'nothing to do; move it out of the site or list it in .bpaignore to silence the notice',
  },
  SECRET_IN_SITE: {
    severity: 'warning',
    summary: 'a Kubernetes Secret with data is in the site repository: secret material in git',
    fix: 'remove the Secret from the repository (and from its history) and create it in the cluster; bpa refers to Secrets by name',
  },
  SECRET_NOT_FOUND: {
    severity: 'error',
    summary:
      'the Site refers to a Secret (ssh.bootstrapCredentials, registryMirror.credentials, installer.variables) that is not in the site',
    fix: 'add the v1 Secret document, encrypted with sops, or correct the name',
  },
  SECRET_NOT_ENCRYPTED: {
    severity: 'error',
    summary: 'a Secret the Site refers to is in plain text in the repository',
    fix: 'encrypt it with sops for an age recipient bpa has the key of (sops -e -i FILE), then commit',
  },
  SECRET_PLAINTEXT: {
    severity: 'warning',
    summary:
      'a Secret the Site refers to is in plain text; accepted because bpa serve watches a directory (--watch)',
    fix: 'encrypt it with sops before it is committed anywhere',
  },
  SECRET_KEY_MISSING: {
    severity: 'error',
    summary:
      'a Secret the Site refers to lacks a key its use needs (password; username and password), or an installer variable key is not a variable name',
    fix: 'add the key to the Secret (sops edit FILE)',
  },
  SECRET_CONFLICT: {
    severity: 'error',
    summary: 'ssh.bootstrapCredentials and ssh.bootstrapCredentialsSecret are both set',
    fix: 'keep one: the site Secret or the cluster Secret',
  },
  SOPS_INVALID: {
    severity: 'error',
    summary:
      "a SOPS-encrypted Secret's structure is wrong: sops metadata missing or malformed, no age recipient, or a value not encrypted",
    fix: 'encrypt the file again with sops (age recipients; Flux advises encrypted_regex: ^(data|stringData)$)',
  },
  SOPS_UNSUPPORTED_KIND: {
    severity: 'error',
    summary: 'a SOPS-encrypted document other than a v1 Secret',
    fix: 'keep bpa documents readable; put the secret values in a v1 Secret and refer to it from the Site',
  },
  SOPS_NO_KEY: {
    severity: 'error',
    summary: 'a SOPS file is encrypted for no age key bpa was given (apply, reconcile, serve)',
    fix: 'give bpa the key (--sops-age-key-file, or the .agekey keys of --sops-age-secret), or add its recipient with sops updatekeys',
  },
  SOPS_TAMPERED: {
    severity: 'error',
    summary:
      'an encrypted value of a SOPS file does not verify: it, or its key, was changed after encryption',
    fix: 'restore the file from git or encrypt the values again with sops',
  },
  SOPS_MAC_MISMATCH: {
    severity: 'error',
    summary:
      "a SOPS file's MAC does not match its values: a value, or a key left unencrypted (metadata.name…), was edited by hand",
    fix: 'edit SOPS files only with sops (sops edit FILE); restore the file from git',
  },
  UNSUPPORTED_LIST_ITEM: {
    severity: 'error',
    summary: 'a List holds a bpa.akraino.org document; only metal3 objects are read out of a List',
    fix: 'write the document as a YAML document of its own (kubectl get KIND NAME -o yaml gives one)',
  },
  MISSING_FIELD: {
    severity: 'error',
    summary: 'a required field is missing',
    fix: 'add the field',
  },
  UNKNOWN_FIELD: {
    severity: 'error',
    summary: 'a field is not part of the kind (often a typo)',
    fix: 'check the spelling against docs/site-format.md',
  },
  WRONG_TYPE: {
    severity: 'error',
    summary: 'a field has the wrong type (e.g. a string where a number belongs)',
    fix: 'write the value in the type shown',
  },
  INVALID_VALUE: {
    severity: 'error',
    summary: 'a value is outside what the field allows',
    fix: 'use one of the allowed values shown',
  },
  INVALID_NAME: {
    severity: 'error',
    summary: 'metadata.name or a referenced name is not a valid Kubernetes name',
    fix: 'use lowercase letters, digits and "-" (RFC 1123)',
  },
  INVALID_NODE_NAME: {
    severity: 'error',
    summary: 'a node name is not an RFC 1123 label',
    fix: 'use at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit',
  },
  INVALID_NODE_ENTRY: {
    severity: 'error',
    summary: 'an entry of masters/workers is not a single-key map `- name: {…}`',
    fix: 'write each node as `- node-name: {mac-address: …}` or `- node-name:`',
  },
  INVALID_MAC: {
    severity: 'error',
    summary: 'a MAC address is malformed',
    fix: 'write six hex pairs separated by ":" (e.g. 00:c5:16:05:61:b2)',
  },
  UNUSABLE_MAC: {
    severity: 'error',
    summary:
      "a node's mac-address is a multicast or broadcast address, or 00:00:00:00:00:00: it can never identify a host",
    fix: "write the MAC of one of the host's NICs (the low bit of its first octet is clear)",
  },
  INVALID_QUANTITY: {
    severity: 'error',
    summary: 'memory is not a valid Kubernetes quantity',
    fix: 'write e.g. 4Gi, 8192Mi or 8G: a number and a suffix, no space, no "B"',
  },
  INVALID_CPU: {
    severity: 'error',
    summary: 'cpu is not a positive integer',
    fix: 'write the minimum CPU count as a whole number, e.g. 8',
  },
  INVALID_PACKAGE_NAME: {
    severity: 'error',
    summary: 'a package name breaks Debian policy',
    fix: 'package names are lowercase letters, digits and + . - (at least two characters, starting with a letter or digit)',
  },
  INVALID_PACKAGE_VERSION: {
    severity: 'error',
    summary: 'a package version has characters a Debian version cannot hold',
    fix: 'use [epoch:]upstream[-revision] with letters, digits and . + ~ - :',
  },
  INVALID_PLUGIN_NAME: {
    severity: 'error',
    summary: 'a KUD plugin name has characters outside [a-z0-9-]',
    fix: 'use the plugin name as KUD spells it, e.g. onap4k8s',
  },
  INVALID_CIDR: {
    severity: 'error',
    summary: 'PodSubnet is not a valid CIDR',
    fix: 'write an IPv4 or IPv6 network with its prefix length, e.g. 10.244.64.0/18',
  },
  INVALID_KUBERNETES_VERSION: {
    severity: 'error',
    summary: 'kubernetesVersion is not a Kubernetes release written vMAJOR.MINOR.PATCH',
    fix: 'write the version as Kubespray takes it, e.g. v1.27.10',
  },
  INVALID_PACKAGE_ENTRY: {
    severity: 'error',
    summary: 'a software item is neither a package name nor `{name: {version: v}}`',
    fix: 'write `- htop` or `- jq: {version: 1.6-2}`',
  },

  DEPRECATED_FIELD: {
    severity: 'warning',
    summary:
      'a field of the 2019 ICN Provisioning (master, worker, hostfile, kudInstallerPath, dhcpLeaseFile, multiClusterDir)',
    fix: 'the message says what replaces it: masters/workers for master/worker; the others are ignored and can be removed',
  },

  // Cross-document rules
  DUPLICATE_NAME: {
    severity: 'error',
    summary: 'two documents of one kind share a name',
    fix: 'rename one; names are unique per kind',
  },
  UNRESOLVED_REFERENCE: {
    severity: 'error',
    summary: 'a Cluster names a Provisioning or Software document that is not in the site',
    fix: 'fix the name, or add the document',
  },
  CLUSTER_LABEL_MISMATCH: {
    severity: 'error',
    summary: 'documents tied to one cluster disagree on the `cluster` label',
    fix: 'give the Cluster and the documents it references the same metadata.labels.cluster',
  },
  DUPLICATE_PROVISIONING: {
    severity: 'error',
    summary: 'a cluster has more than one Provisioning document',
    fix: 'keep one Provisioning per cluster',
  },
  DUPLICATE_SOFTWARE: {
    severity: 'error',
    summary: 'a cluster has more than one Software document',
    fix: 'keep one Software per cluster, or merge the lists',
  },
  UNUSED_SOFTWARE: {
    severity: 'warning',
    summary: 'a Software document belongs to no cluster with a Provisioning',
    fix: 'check its cluster label, or remove it',
  },
  DUPLICATE_PACKAGE: {
    severity: 'error',
    summary: 'a package is listed twice for the same role',
    fix: 'keep one entry per package; put the version pin on it',
  },
  RESERVED_NODE_NAME: {
    severity: 'error',
    summary:
      'a node name is also an inventory group or keyword (all, localhost, etcd, kube-master, …)',
    fix: 'rename the node: installers select nodes by name, and this name would select a whole group',
  },
  INVALID_SELECTOR: {
    severity: 'error',
    summary: 'a hostSelector expression whose values do not fit its operator',
    fix: 'In and NotIn take one or more values, Exists and DoesNotExist none, Gt and Lt exactly one integer',
  },
  INVALID_RANGE: {
    severity: 'error',
    summary: 'a hardware range no host can pass (min over max), or one with no bound',
    fix: 'write {min: n}, {max: n} or both with min <= max',
  },
  INVALID_REGEX: {
    severity: 'error',
    summary:
      'a {matches: ...} regular expression that does not compile, is too long, or could run away',
    fix: 'keep it under 256 characters, without backreferences, lookarounds, or a repeated group that holds a quantifier or an alternation',
  },
  DUPLICATE_NODE: {
    severity: 'error',
    summary: 'a node name appears twice in the same role list',
    fix: 'remove the repeated entry; the same name under masters and workers is allowed (one dual-role node)',
  },
  DUAL_ROLE_MISMATCH: {
    severity: 'error',
    summary: 'a dual-role node gives different MACs (or resources) under masters and workers',
    fix: 'give the same MAC in both entries, or leave one entry empty',
  },
  PACKAGE_CONFLICT: {
    severity: 'error',
    summary:
      'a dual-role node gets one package pinned to two versions by masterSoftware and workerSoftware',
    fix: 'pin the same version in both lists, or pin it in one only',
  },
  DUPLICATE_MAC: {
    severity: 'error',
    summary: 'one MAC address is given to two nodes in the site',
    fix: 'each MAC names one host: fix the typo or remove one of the nodes',
  },
  DUPLICATE_HOST_MAC: {
    severity: 'error',
    summary:
      "two BareMetalHosts share a MAC address (00:00:00:00:00:00, metal3's unknown NIC, excepted)",
    fix: 'fix the inventory: a MAC identifies one host',
  },
  UNUSABLE_HOST_MAC: {
    severity: 'warning',
    summary:
      "a BareMetalHost's boot or NIC MAC in the site is a multicast or broadcast address: it identifies no host",
    fix: "correct the MAC where the host's document was taken from; the host stays usable by its other MACs and its resources",
  },
  NO_HOST_DATA: {
    severity: 'warning',
    summary:
      'bpa reads no MAC and no hardware from a BareMetalHost, or no hardware from a HardwareData (often a field indented under the wrong parent)',
    fix: 'give spec.bootMACAddress or status.hardware where metal3 writes them; the message names misplaced fields it found',
  },
  INVENTORY_SKIPPED: {
    severity: 'warning',
    summary:
      'with --inventory DIR, a file or document that cannot be read is left out; the other hosts are used',
    fix: 'fix what the message names (it carries the original code), or remove the document',
  },
  NO_MASTER: {
    severity: 'error',
    summary: 'a cluster has no master',
    fix: 'add at least one entry under spec.masters',
  },
  EVEN_MASTERS: {
    severity: 'warning',
    summary:
      'a cluster has an even number of masters; etcd needs a majority, so an odd count tolerates the same failures with one host less',
    fix: 'use 1, 3 or 5 masters',
  },
  MULTIPLE_SITES: {
    severity: 'error',
    summary: 'more than one Site document',
    fix: 'keep one Site document with all site-wide settings',
  },
  WAVE_UNKNOWN_CLUSTER: {
    severity: 'warning',
    summary: 'a wave of the Site rollout names a cluster the site does not have',
    fix: 'correct the name, or remove it from the wave',
  },
  INVALID_TIMEZONE: {
    severity: 'error',
    summary: 'a maintenance window names a time zone that does not exist',
    fix: 'use an IANA time zone such as Europe/Berlin, America/New_York or UTC',
  },

  // Trust: what the operator lets a site ask of the machine bpa runs on
  SITE_COMMAND_NOT_ALLOWED: {
    severity: 'error',
    summary:
      'the Site sets an installer command or image, which would run on the machine bpa runs on',
    fix: "set it in bpa's configuration (--installer-command, …), or start bpa with --allow-site-commands",
  },
  PACKAGE_MIRROR_NOT_ALLOWED: {
    severity: 'error',
    summary:
      'packageMirror turns off apt signature checks ([trusted=yes]) or points outside the mirrors bpa allows',
    fix: 'name a mirror listed in --package-mirrors, without [trusted=yes]; or start bpa with --allow-site-commands',
  },

  // Planning (bpa plan): the site is valid, but it does not fit the inventory
  NODE_UNPLACED: {
    severity: 'error',
    summary: 'no eligible host can become this node',
    fix: 'read the diagnostic: it names the requirement, who took the hosts that qualify, and the nearest miss; add hosts, relax cpu/memory, or fix the MAC',
  },
  HOST_NO_LONGER_QUALIFIES: {
    severity: 'warning',
    summary:
      'a running node stays on a host that no longer passes its required terms (re-inspected hardware, changed labels)',
    fix: 'fix the host, relax the terms, or plan with --prune to see (and apply) the node placed on a host that passes',
  },
  NO_IP: {
    severity: 'error',
    summary: 'a node has a host, but no address is known for it',
    fix: 'check the DHCP lease files (an active lease for one of the host MACs) or the inventory NIC addresses',
  },
  KUBERNETES_DOWNGRADE: {
    severity: 'error',
    summary: 'kubernetesVersion is lower than the version the cluster runs',
    fix: 'Kubernetes clusters are not downgraded: set the version the cluster runs (or a later one), or rebuild the cluster',
  },
  KUBERNETES_UPGRADE_SKIPS_MINOR: {
    severity: 'error',
    summary: 'kubernetesVersion skips a minor version of the one the cluster runs',
    fix: 'upgrade one minor version at a time (v1.26.x → v1.27.x → v1.28.x), applying each before the next',
  },
  PLUGINS_UNSUPPORTED: {
    severity: 'error',
    summary: 'KUDPlugins are listed, but the installer has no add-on path (the kubespray flavour)',
    fix: 'remove KUDPlugins (Kubespray add-ons are Kubespray variables, see docs/apply.md), or configure an add-on command',
  },
  LEASE_MALFORMED: {
    severity: 'warning',
    summary: 'a lease file entry could not be read and was skipped',
    fix: 'check the line named (its text is not repeated); other leases are still used',
  },
  LEASE_IPV6_UNUSED: {
    severity: 'warning',
    summary: 'a DHCPv6 lease could not be tied to a MAC, so to no host, and was not used',
    fix: 'let the client send a DUID-LL or DUID-LLT, or a DHCPv4 client identifier with its DUID (RFC 4361); or give the host an IPv4 lease',
  },
  LEASE_FILE_OUTSIDE_SITE: {
    severity: 'error',
    summary: 'a lease file the site names leads outside the site directory (a symbolic link)',
    fix: 'keep site lease files inside the site; give a file of the machine bpa runs on with --leases',
  },
  LEASE_FORMAT_UNKNOWN: {
    severity: 'warning',
    summary: 'a lease file is neither ISC dhcpd, dnsmasq nor Kea CSV',
    fix: 'point bpa at the DHCP server lease file itself',
  },
  LEASE_FILE_UNREADABLE: {
    severity: 'warning',
    summary: 'a lease file could not be read',
    fix: 'check the path and permissions; addresses then come from the inventory only',
  },
} as const satisfies Record<string, CodeInfo>;

export type Code = keyof typeof CODES;
