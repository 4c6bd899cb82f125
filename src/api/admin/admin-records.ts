/** @module admin-records — the admin API's own files in the data directory: the audit log and the named operators. */
import { join } from 'node:path';
import { AUDIT_FILE, FileAuditLog } from './audit-log.ts';
import { FileOperatorStore, OPERATORS_FILE } from './operators.ts';

/** Opens `<root>/audit.jsonl` and `<root>/operators.json` (created on the first operator). */
export function openAdminRecords(root: string): { audit: FileAuditLog; operators: FileOperatorStore } {
  return {
    audit: new FileAuditLog(join(root, AUDIT_FILE)),
    operators: new FileOperatorStore(join(root, OPERATORS_FILE)),
  };
}
