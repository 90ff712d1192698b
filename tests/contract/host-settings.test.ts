/** The embedded host enforces the host.json that is deployed: the values it uses are that file's. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { HOST_SETTINGS, timeSpanMs } from '../../local/host/host-settings';

const hostJson = JSON.parse(readFileSync(resolve(__dirname, '..', '..', 'host.json'), 'utf8')) as {
  functionTimeout: string;
  extensions: { serviceBus: { maxAutoLockRenewalDuration: string } };
};

describe('host settings', () => {
  it('are the deployed host.json values', () => {
    expect(HOST_SETTINGS.functionTimeout).toBe(hostJson.functionTimeout);
    expect(HOST_SETTINGS.maxAutoLockRenewalDuration).toBe(
      hostJson.extensions.serviceBus.maxAutoLockRenewalDuration,
    );
  });

  it('reads TimeSpans as the host does', () => {
    expect(timeSpanMs('00:10:00')).toBe(600_000);
    expect(timeSpanMs('00:00:00.500')).toBe(500);
    expect(timeSpanMs('1.02:00:00')).toBe(93_600_000);
    expect(() => timeSpanMs('10 minutes')).toThrow(/TimeSpan/);
  });
});
