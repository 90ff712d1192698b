/** Queue names of CONTRACTS 1; the Bicep and the consistency test use the same ones. */
export const QUEUE = {
  ledger: 'ledger',
  orderTransactions: 'order-transactions',
  parked: 'parked',
} as const;

/** Application properties a parked message carries besides the ones it came with. */
export const PARK_PROPERTY = {
  reason: 'parkReason',
  description: 'parkDescription',
  queue: 'parkedFromQueue',
  sessionId: 'parkedFromSessionId',
  transactionId: 'transactionId',
} as const;
