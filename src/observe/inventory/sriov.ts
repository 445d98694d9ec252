/**
 * NIC models that can carry SR-IOV virtual functions, as physical functions (PFs) report them.
 * metal3 (ironic inspection) gives a NIC's PCI vendor and device id in `nics[].model`, such as
 * `0x8086 0x1572`. Virtual functions (0x154c, 0x1889, 0x1016, ...) are not listed: a VF offers
 * no further VFs. docs/site-format.md lists this table; a test keeps the two equal.
 */
export interface SriovFamily {
  family: string;
  /** PCI vendor id, `0x` and four lowercase hex digits. */
  vendor: string;
  /** PCI device ids of the family's PFs, same form. */
  devices: readonly string[];
}

const INTEL = '0x8086';
const NVIDIA_MELLANOX = '0x15b3';

export const SRIOV_NIC_FAMILIES: readonly SriovFamily[] = [
  {
    family: 'Intel 82599 (ixgbe)',
    vendor: INTEL,
    devices: [
      '0x10f7',
      '0x10f8',
      '0x10f9',
      '0x10fb',
      '0x10fc',
      '0x1507',
      '0x1514',
      '0x1517',
      '0x151c',
      '0x1529',
      '0x152a',
      '0x154a',
      '0x154d',
      '0x1557',
      '0x1558',
    ],
  },
  { family: 'Intel X540 (ixgbe)', vendor: INTEL, devices: ['0x1528', '0x1560'] },
  {
    family: 'Intel X550, X552, X553 (ixgbe)',
    vendor: INTEL,
    devices: ['0x1563', '0x15aa', '0x15ab', '0x15ac', '0x15ad', '0x15ae', '0x15c2', '0x15d1'],
  },
  {
    family: 'Intel X710, XL710, XXV710 (i40e)',
    vendor: INTEL,
    devices: [
      '0x1572',
      '0x1580',
      '0x1581',
      '0x1583',
      '0x1584',
      '0x1585',
      '0x1586',
      '0x1587',
      '0x1588',
      '0x1589',
      '0x158a',
      '0x158b',
      '0x15ff',
    ],
  },
  {
    family: 'Intel X722 (i40e)',
    vendor: INTEL,
    devices: ['0x37ce', '0x37cf', '0x37d0', '0x37d1', '0x37d2', '0x37d3'],
  },
  {
    family: 'Intel E810 (ice)',
    vendor: INTEL,
    devices: ['0x1591', '0x1592', '0x1593', '0x1599', '0x159a', '0x159b'],
  },
  { family: 'Mellanox ConnectX-3 (mlx4)', vendor: NVIDIA_MELLANOX, devices: ['0x1003', '0x1007'] },
  { family: 'Mellanox ConnectX-4 (mlx5)', vendor: NVIDIA_MELLANOX, devices: ['0x1013', '0x1015'] },
  { family: 'Mellanox ConnectX-5 (mlx5)', vendor: NVIDIA_MELLANOX, devices: ['0x1017', '0x1019'] },
  {
    family: 'Mellanox ConnectX-6 (mlx5)',
    vendor: NVIDIA_MELLANOX,
    devices: ['0x101b', '0x101d', '0x101f'],
  },
  { family: 'Mellanox ConnectX-7 (mlx5)', vendor: NVIDIA_MELLANOX, devices: ['0x1021'] },
];

const MODELS = new Set(SRIOV_NIC_FAMILIES.flatMap((f) => f.devices.map((d) => `${f.vendor} ${d}`)));

/**
 * `vendor device` in the table's form, from what inspection reports: `0x8086 0x1572`, in any
 * case and spacing; `8086:1572` (lspci) is read too. Undefined for anything else (`unknown`).
 */
export function pciModel(model: string): string | undefined {
  const m = /^(?:0x)?([0-9a-f]{4})(?:\s+|:)(?:0x)?([0-9a-f]{4})$/.exec(model.trim().toLowerCase());
  return m ? `0x${m[1]} 0x${m[2]}` : undefined;
}

/**
 * Answers by model string as written: an inventory has few distinct models and many NICs, and
 * parsing each one cost a third of reading 10,000 hosts. Bounded against hostile input.
 */
const answers = new Map<string, boolean>();

/** Whether a NIC model (as reported in `nics[].model`) is an SR-IOV capable PF. */
export function isSriovModel(model: string): boolean {
  let answer = answers.get(model);
  if (answer === undefined) {
    const key = pciModel(model);
    answer = key !== undefined && MODELS.has(key);
    if (answers.size < 4096) answers.set(model, answer);
  }
  return answer;
}
