/** Queue names of docs/messages.md; the Bicep and the consistency test use the same ones. */
export const QUEUE = {
  ledger: 'ledger',
  orderTransactions: 'order-transactions',
  parked: 'parked',
} as const;

/**
 * The flags each queue is created with (bicep/modules/servicebus.bicep; the consistency test holds
 * the two equal). The operations read them from here rather than from the broker, whose
 * administration API needs the Manage right.
 */
export const QUEUE_FLAGS: Readonly<
  Record<
    (typeof QUEUE)[keyof typeof QUEUE],
    { requiresSession: boolean; requiresDuplicateDetection: boolean }
  >
> = {
  [QUEUE.ledger]: { requiresSession: true, requiresDuplicateDetection: true },
  [QUEUE.orderTransactions]: { requiresSession: true, requiresDuplicateDetection: true },
  [QUEUE.parked]: { requiresSession: false, requiresDuplicateDetection: true },
};

/** Application properties a parked message carries besides the ones it came with. */
export const PARK_PROPERTY = {
  reason: 'parkReason',
  description: 'parkDescription',
  queue: 'parkedFromQueue',
  sessionId: 'parkedFromSessionId',
  transactionId: 'transactionId',
} as const;
