/** A test double of the OrchestrationClient port, for the orders API's tests. */
import type { OrchestrationClient, OrchestrationStatus } from '../../src/services/ports';

/** Records every call; an instance id starts once. */
export class RecordingOrchestrations implements OrchestrationClient {
  readonly started: Array<{ name: string; instanceId: string; input: unknown; started: boolean }> = [];
  readonly events: Array<{ instanceId: string; eventName: string; data: unknown }> = [];
  private readonly instances = new Set<string>();
  /** A failure the next call of that operation throws instead of reaching the orchestrations. */
  readonly failNext: { startNew?: Error; raiseEvent?: Error } = {};
  /** Runs once an event is raised, before raiseEvent returns: what the instance did meanwhile. */
  afterEvent: (() => Promise<void>) | undefined;

  async startNew(name: string, instanceId: string, input: unknown): Promise<boolean> {
    this.throwIfFailing('startNew');
    const started = !this.instances.has(instanceId);
    this.instances.add(instanceId);
    this.started.push({ name, instanceId, input, started });
    return started;
  }

  async getStatus(): Promise<OrchestrationStatus | undefined> {
    return undefined;
  }

  async raiseEvent(instanceId: string, eventName: string, data: unknown): Promise<void> {
    this.throwIfFailing('raiseEvent');
    this.events.push({ instanceId, eventName, data });
    await this.afterEvent?.();
  }

  private throwIfFailing(operation: 'startNew' | 'raiseEvent'): void {
    const failure = this.failNext[operation];
    if (failure === undefined) return;
    delete this.failNext[operation];
    throw failure;
  }
}
