/**
 * The operations functions are registered by the Azure entry point, behind function keys where no
 * identity provider is configured. Outside
 * the Functions host `@azure/functions` skips registration, so `app.http` is observed with a spy;
 * nothing reaches the network, as the clients connect on first use.
 */
import type { app } from '@azure/functions';
import { loadEntry, SETTINGS } from '../support/azure-entry';

function httpRegistrations(env: Record<string, string> = {}): Parameters<typeof app.http>[] {
  return loadEntry({ ...SETTINGS, ...env }).http.mock.calls;
}

describe('src/functions/index.ts: operations', () => {
  it('registers the reads with a function key and the replays with the admin key', () => {
    const ops = httpRegistrations()
      .filter(([name]) => name.startsWith('ops'))
      .map(
        ([name, options]) => `${name} ${options.methods?.join(',')} ${options.route} ${options.authLevel}`,
      );
    expect(ops).toEqual([
      'opsListParked GET ops/parked function',
      'opsShowParked GET ops/parked/{messageId} function',
      'opsShowParkedByQuery GET ops/parked-message function',
      'opsReplayParked POST ops/parked/{messageId}/replay admin',
      'opsReplayParkedByQuery POST ops/parked-message/replay admin',
      'opsListDeadLettered GET ops/deadletter/{queue} function',
      'opsShowDeadLettered GET ops/deadletter/{queue}/{messageId} function',
      'opsShowDeadLetteredByQuery GET ops/deadletter-message/{queue} function',
      'opsReplayDeadLettered POST ops/deadletter/{queue}/{messageId}/replay admin',
      'opsReplayDeadLetteredByQuery POST ops/deadletter-message/{queue}/replay admin',
      'opsSessions GET ops/sessions/{queue} function',
      'opsBulkReplay POST ops/replay admin',
      'opsOrderReplay POST ops/orders/{orderId}/replay admin',
      'opsDiscard POST ops/discard admin',
      'opsArchive GET ops/archive function',
      'opsAudit GET ops/audit function',
      'opsConsole GET ops/console function',
      'opsOverview GET ops/overview function',
      'opsInspectOrder GET ops/orders/{orderId} function',
    ]);
  });

  it('asks for no key where the platform authenticates (WEBSITE_AUTH_ENABLED): the app role decides', () => {
    const levels = httpRegistrations({ WEBSITE_AUTH_ENABLED: 'True' })
      .filter(([name]) => name.startsWith('ops') || name.endsWith('Order'))
      .map(([name, options]) => `${name} ${options.authLevel}`);
    expect(levels).toContain('opsReplayParked anonymous');
    expect(levels).toContain('cancelOrder anonymous');
    expect(levels.filter((level) => !level.endsWith(' anonymous'))).toEqual([]);
  });
});
