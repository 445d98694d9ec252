/**
 * Run by reports.test.ts in a process of its own with a small heap: parses the report in
 * REPORT_FILE as a reconcile parses the previous reports.
 */
import { readFileSync } from 'node:fs';
import { parseReports } from '../../../src/source/site-source.js';

const text = readFileSync(process.env['REPORT_FILE'] as string, 'utf8');
const parsed = parseReports(new Map([['status/inventory.yaml', text]]));
const doc = parsed.get('status/inventory.yaml') as { status: { hosts: unknown[] } } | undefined;
process.stdout.write(`${doc?.status.hosts.length ?? 'no'} hosts\n`);
