/**
 * The operators' journal, in the `operations` container (docs/documents.md): the audit of every
 * operator action (who, as the platform vouched for them; what; which messages; the outcome) and the
 * archive of every message discarded, kept whole before it is removed from its queue.
 *
 * Partitions, each a fixed prefix and then its key, so two keys never share one: an archived message
 * lives in its order's partition, `archive:order:<orderId>` (`archive:no-order` for a message of no
 * order), which `GET ops/archive?orderId=` reads alone; an audit record in its day's,
 * `audit:<YYYY-MM-DD>` (UTC), which `GET ops/audit?since=` reads one day at a time.
 */
import { randomUUID } from 'node:crypto';
import { compareText } from '../../domain/compare';
import { PermanentError } from '../../domain/errors';
import type { Document, DocumentContainer } from '../ports';
import { detailOf } from './held-messages';
import { orderIdOf, type Held } from './held-selection';

export const OPERATIONS_CONTAINER = 'operations';
export const OPERATIONS_PARTITION_KEY_PATH = '/partition';

export const ARCHIVE_KIND = 'archive';
export const AUDIT_KIND = 'audit';

/** The longest span `GET ops/audit` reads: one partition per day. */
export const MAX_AUDIT_DAYS = 31;

const DAY_MS = 86_400_000;

export function archivePartition(orderId: string | null): string {
  return orderId === null ? 'archive:no-order' : `archive:order:${orderId}`;
}

export function auditPartition(at: number): string {
  return `audit:${new Date(at).toISOString().slice(0, 10)}`;
}

/**
 * One archived copy per held copy: the broker's sequence number names it in its queue, so a discard
 * retried after a failure writes the same document, never a second one.
 */
export function archiveId(message: Held): string {
  return message.kind === 'parked'
    ? `parked:${message.sequenceNumber}`
    : `deadletter:${message.queue}:${message.sequenceNumber}`;
}

export interface ArchiveDocument extends Document {
  kind: typeof ARCHIVE_KIND;
  partition: string;
  orderId: string | null;
  messageId: string;
  /** `parked`, or the queue whose dead-letter sub-queue held it. */
  heldIn: string;
  archivedAt: string;
  by: string;
  vouchedBy: string;
  why: string;
  /** The message whole, as `GET ops/parked/{messageId}` shows it, body included. */
  message: Record<string, unknown>;
}

export interface AuditedMessage {
  messageId: string;
  orderId: string | null;
  action: string;
  detail?: string;
}

/** What an action reports for the audit; the journal adds who, when and where it is kept. */
export interface AuditEntry {
  /** `replay`, `ordered-replay`, `discard`, `replay-one`, `cancel`, `review`. */
  action: string;
  /** What was asked, as the request said it. */
  request: Record<string, unknown>;
  /** `done`, `dry-run`, `refused` or `failed`. */
  outcome: string;
  /** The HTTP status answered. */
  status: number;
  messages: AuditedMessage[];
  /** Why the action was refused or failed, when it was. */
  detail?: string;
}

export interface AuditDocument extends Document, AuditEntry {
  kind: typeof AUDIT_KIND;
  partition: string;
  at: string;
  by: string;
  vouchedBy: string;
}

/** Who acted, as the platform vouched for them (src/functions/http/actor.ts `authorize`). */
export interface Actor {
  /** `entra:<name>`, `function-key`, `admin-key` or `local`. */
  actor: string;
  /** How the caller was let in, in words, for the audit. */
  vouchedBy: string;
}

export interface OperationsJournal {
  /** Keeps the message whole before it is removed; a copy already kept stays as it was. */
  archive(message: Held, by: Actor, why: string, at: number): Promise<void>;
  audit(by: Actor, entry: AuditEntry, at: number): Promise<AuditDocument>;
  archived(orderId: string | null): Promise<ArchiveDocument[]>;
  /** The records from `since` to `until` (inclusive), oldest first. */
  audited(since: number, until: number): Promise<AuditDocument[]>;
}

export function createOperationsJournal(container: DocumentContainer): OperationsJournal {
  return {
    async archive(message, by, why, at) {
      const orderId = orderIdOf(message);
      const document: ArchiveDocument = {
        id: archiveId(message),
        partition: archivePartition(orderId),
        kind: ARCHIVE_KIND,
        orderId,
        messageId: message.messageId,
        heldIn: message.kind === 'parked' ? 'parked' : message.queue,
        archivedAt: new Date(at).toISOString(),
        by: by.actor,
        vouchedBy: by.vouchedBy,
        why,
        message: detailOf(message),
      };
      // 409: this very copy was archived by an earlier attempt whose removal did not happen; the
      // first archive stands, and the removal goes ahead.
      await container.create(document);
    },

    async audit(by, entry, at) {
      const document: AuditDocument = {
        ...entry,
        id: randomUUID(),
        partition: auditPartition(at),
        kind: AUDIT_KIND,
        at: new Date(at).toISOString(),
        by: by.actor,
        vouchedBy: by.vouchedBy,
      };
      const written = await container.create(document);
      if (written.status !== 201) {
        throw new PermanentError('audit-conflict', `audit record ${document.id} already exists`);
      }
      return document;
    },

    async archived(orderId) {
      const stored = await container.query<ArchiveDocument>({
        partitionKey: archivePartition(orderId),
        where: { kind: ARCHIVE_KIND },
      });
      return stored.map((entry) => entry.document).sort((a, b) => compareText(a.archivedAt, b.archivedAt));
    },

    async audited(since, until) {
      const found: AuditDocument[] = [];
      for (let day = Math.floor(since / DAY_MS) * DAY_MS; day <= until; day += DAY_MS) {
        const stored = await container.query<AuditDocument>({
          partitionKey: auditPartition(day),
          where: { kind: AUDIT_KIND },
        });
        found.push(...stored.map((entry) => entry.document));
      }
      const from = new Date(since).toISOString();
      const to = new Date(until).toISOString();
      return found
        .filter((record) => record.at >= from && record.at <= to)
        .sort((a, b) => compareText(a.at, b.at));
    },
  };
}
